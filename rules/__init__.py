"""The rule pages (LCKnnn.md), shipped as package data; read them with lockcheck.docs."""
