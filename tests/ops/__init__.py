"""The op conformance suite's case definitions (see README.md): torch is the reference."""
