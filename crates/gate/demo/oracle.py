"""The freezegate oracle protocol for Python properties (SPEC §4).

A property is a function of the decoded JSON input that returns None when it holds and a
message when it fails. The message is the failure's signature: the shrinker keeps only
candidates that fail with the same one, so it names the failure, not the input. One-shot mode reads one input on stdin and exits 0 (holds) or 1
(fails, with a last stdout line `failure: <message>`); worker mode (FREEZEGATE_WORKER=1)
answers one line per input line: `pass`, `fail <message>` or `error <message>`.
"""
import json
import os
import sys


def serve(check):
    if os.environ.get("FREEZEGATE_WORKER") == "1":
        for line in sys.stdin:
            try:
                message = check(json.loads(line))
                answer = "pass" if message is None else "fail " + message
            except Exception as e:  # the harness broke on this input, not the property
                answer = "error " + repr(e)
            print(answer.replace("\n", " "), flush=True)
        return 0
    message = check(json.load(sys.stdin))
    if message is None:
        return 0
    print("failure: " + message.replace("\n", " "))
    return 1
