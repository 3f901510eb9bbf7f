"""The freezegate oracle protocol for Python properties (SPEC §4).

A property is a function of the decoded JSON input that returns None when it holds and a
message when it fails. The message is the failure's signature: the shrinker keeps only
candidates that fail with the same one, so it names the failure, not the input. An exception
the property raises is a failure too, named by the exception's type (its traceback goes to
stderr). One-shot mode reads one input on stdin and exits 0 (holds) or 1 (fails, with a last
stdout line `failure: <message>`); worker mode (FREEZEGATE_WORKER=1) answers one line per
input line, `pass` or `fail <message>`, flushed. Both modes give an input the same answer.
The property runs with stdout sent to stderr, so that a print in it is no answer.
"""
import contextlib
import json
import os
import sys
import traceback


def run(check, doc):
    """The property's message on `doc`: None when it holds."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            message = check(doc)
    except Exception as e:  # a failure of the property; KeyboardInterrupt still ends it
        traceback.print_exc()
        return type(e).__name__
    return None if message is None else str(message).replace("\n", " ")


def serve(check):
    if os.environ.get("FREEZEGATE_WORKER") == "1":
        for line in sys.stdin:
            message = run(check, json.loads(line))
            print("pass" if message is None else "fail " + message, flush=True)
        return 0
    message = run(check, json.load(sys.stdin))
    if message is None:
        return 0
    print("failure: " + message)
    return 1
