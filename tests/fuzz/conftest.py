import os
import sys

# The differential machinery lives with the other Python tests (tests/python/difftest.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
