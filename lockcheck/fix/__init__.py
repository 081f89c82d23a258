"""Applying fixes (see lockcheck.fix.apply)."""
