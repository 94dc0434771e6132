"""Command-line entry points: parse, call the core, print."""
