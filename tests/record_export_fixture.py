"""Re-record tests/fixtures/export_dynamic.json.gz: an AOT compilation (explorer.export) of a small model
with a dynamic batch dim, on CPU, for the Export tab's browser tests.

    PYTHONPATH=. python -m tests.record_export_fixture

The model normalises and takes a softmax over rows (a reduction whose loops depend on the batch dim);
its signature holds parameters and the user's input, its range constraints the batch dim's [2, 64].
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch

import explorer
from tests.record_paths import neutralize_file

FIXTURE = Path(__file__).parent / "fixtures" / "export_dynamic.json.gz"


class Scaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(24)

    def forward(self, x):
        y = self.norm(x) * 3.0
        return torch.softmax(y, dim=-1) + x.mean()


def main() -> None:
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=2, max=64)
    with tempfile.TemporaryDirectory() as tmp:
        c = explorer.export(Scaled().eval(), (torch.randn(6, 24),), dynamic_shapes={"x": {0: batch}},
                            package_path=Path(tmp) / "scaled.pt2")
        c.save(FIXTURE)
    neutralize_file(FIXTURE)  # the package's temporary path, the model's file and torch's: tests/record_paths.py
    print(f"{FIXTURE} ({FIXTURE.stat().st_size} bytes): {c.export!r}")


if __name__ == "__main__":
    main()
