"""Where the suite's files are, for test modules at any depth under tests/ (unit/, capture/, browser/...)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
EXAMPLES = ROOT / "examples"
