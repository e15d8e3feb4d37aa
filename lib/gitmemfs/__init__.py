"""git-memfs: git-native long-term memory for AI agents."""

__version__ = "0.1.0"
# The release date printed in the man pages (kept fixed so they are reproducible).
__date__ = "2026-11-29"
