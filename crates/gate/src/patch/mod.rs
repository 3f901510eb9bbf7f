//! Patch integrity (SPEC §9 step 2): signed edits of protected paths and gaming-move detection.
