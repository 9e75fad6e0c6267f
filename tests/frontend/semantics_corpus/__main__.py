"""`python -m semantics_corpus` (from tests/frontend): the corpus size per theme."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from semantics_corpus import sizes  # noqa: E402

for name, count in sizes().items():
    print(f"{name:>16}: {count}")
