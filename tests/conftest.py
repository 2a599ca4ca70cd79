import sys
from pathlib import Path

# the tests' own helper modules (reference.py, conformance.py, strategies.py)
sys.path.insert(0, str(Path(__file__).resolve().parent))
