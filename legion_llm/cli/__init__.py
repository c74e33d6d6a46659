"""Command line: parse options, call the library, render human text or --json."""
