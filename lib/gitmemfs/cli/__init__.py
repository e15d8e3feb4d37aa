"""Command-line front ends, one per console script (git-memory, git-memory-patch, git-dream)."""
