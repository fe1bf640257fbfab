"""Tests of scripts/blas3.py's output check (standard library only).

  python3 -m unittest discover -s tests/python
"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import blas3  # noqa: E402

DUMP = "==BEGIN DUMP_ARRAYS==\nbegin dump: C\n{}\nend   dump: C\n==END   DUMP_ARRAYS==\n"


class PrintedAgree(unittest.TestCase):
    def test_a_last_printed_digit_one_apart_agrees(self):
        self.assertTrue(blas3.printed_agree(DUMP.format("87.52 1.00"), DUMP.format("87.53 1.00")))

    def test_two_units_apart_or_another_shape_disagrees(self):
        self.assertFalse(blas3.printed_agree(DUMP.format("87.52 1.00"), DUMP.format("87.54 1.00")))
        self.assertFalse(blas3.printed_agree(DUMP.format("87.52 1.00"), DUMP.format("87.52")))
        self.assertFalse(blas3.printed_agree(DUMP.format("87.52"), DUMP.format("nan")))
        self.assertFalse(blas3.printed_agree(DUMP.format("87.52"), DUMP.replace("C", "D").format("87.52")))

    def test_precision_is_read_from_each_number(self):
        self.assertTrue(blas3.printed_agree(DUMP.format("3.1416"), DUMP.format("3.1417")))
        self.assertFalse(blas3.printed_agree(DUMP.format("3.1416"), DUMP.format("3.1426")))


if __name__ == "__main__":
    unittest.main()
