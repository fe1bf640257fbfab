"""Tests of scripts/blas3.py's output check (standard library only).

  python3 -m unittest discover -s tests/python
"""

import sys
import tempfile
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

    def test_the_campaigns_check_finds_a_nan_close_to_nothing(self):
        self.assertFalse(blas3.campaign.same_output("1.00 nan", "1.00 2.00"))
        self.assertFalse(blas3.campaign.same_output("1.00 2.00", "1.00 nan"))
        self.assertFalse(blas3.campaign.same_output("1.00 nan", "1.00 nan"))
        self.assertTrue(blas3.campaign.same_output("1.00 2.0000001", "1.00 2.00"))

    def test_precision_is_read_from_each_number(self):
        self.assertTrue(blas3.printed_agree(DUMP.format("3.1416"), DUMP.format("3.1417")))
        self.assertFalse(blas3.printed_agree(DUMP.format("3.1416"), DUMP.format("3.1426")))


HEADER = """#  ifdef MEDIUM_DATASET
#   define NI 200
#   define NJ 220
#   define NK 240
#  endif

#  ifdef LARGE_DATASET
#   define NI 1000
#   define NJ 1100
#   define NK 1200
#  endif
"""


class Work(unittest.TestCase):
    def test_the_sizes_of_the_dataset_give_blas_operations_and_array_bytes(self):
        with tempfile.TemporaryDirectory() as pb:
            header = Path(pb) / blas3.KERNELS["gemm"]
            header.parent.mkdir(parents=True)
            header.with_suffix(".h").write_text(HEADER)
            self.assertEqual(blas3.sizes(Path(pb), "gemm", "LARGE"), {"NI": 1000, "NJ": 1100, "NK": 1200})
            flops, bytes_ = blas3.blas_work(Path(pb), "gemm", "MEDIUM")
            self.assertEqual(flops, 2 * 200 * 220 * 240)
            self.assertEqual(bytes_, 8 * (200 * 220 + 200 * 240 + 240 * 220))


if __name__ == "__main__":
    unittest.main()
