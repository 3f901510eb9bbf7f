"""Property: every user gets a role from the allow-list."""
import sys

from oracle import serve

ALLOWED = {"admin", "editor", "viewer"}


def effective_role(user):
    # user_id 0 is a user like any other: only a missing id is anonymous.
    return user.get("role") or "viewer"


def check(user):
    if not (isinstance(user, dict) and isinstance(user.get("user_id"), int) and user.get("role") in ALLOWED | {""}):
        return None
    role = effective_role(user)
    if role not in ALLOWED:
        return "a user gets a role outside the allow-list"
    return None


sys.exit(serve(check))
