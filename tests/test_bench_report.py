"""Report writer: markdown tables, CSV round trip, PNG plots, machine header."""

import pytest

from agentgym_credit.bench.stats import report as R


def test_markdown_table_layout_and_escaping():
    t = R.markdown_table(["task", "r"], [["a|b", R.fmt_ci(0.5, 0.01)], ["c", R.fmt_num(float("nan"))]])
    lines = t.splitlines()
    assert lines[0] == "| task | r |"
    assert lines[1] == "| :--- | ---: |"
    assert lines[2] == "| a\\|b | 0.500 ± 0.010 |"
    assert lines[3] == "| c | – |"
    with pytest.raises(ValueError, match="cells"):
        R.markdown_table(["a", "b"], [[1]])


def test_fmt_ci_without_half_width():
    assert R.fmt_ci(0.25, float("nan"), digits=2) == "0.25"
    assert R.fmt_ci(float("nan"), 0.1) == "–"


def test_csv_round_trip(tmp_path):
    rows = [{"task": "grid", "N": 4, "pearson": 0.123456789}, {"task": "cue", "N": 8, "extra": "x"}]
    p = R.write_csv(tmp_path / "sub" / "r.csv", rows)
    back = R.read_csv(p)
    assert list(back[0]) == ["task", "N", "pearson", "extra"]
    assert back[0]["pearson"] == pytest.approx(0.123456789) and back[1]["N"] == 8.0
    assert back[1]["pearson"] == "" and back[0]["task"] == "grid"


def test_write_atomic_makes_the_folder_and_keeps_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    path = R.write_atomic(tmp_path / "room" / "r.md", "old\n")
    assert path.read_text() == "old\n"
    plain = tmp_path / "plain.md"
    plain.write_text("x")
    assert path.stat().st_mode == plain.stat().st_mode  # a new file's mode, not mkstemp's 0600
    path.chmod(0o640)
    R.write_atomic(path, "old\n")
    assert path.stat().st_mode & 0o777 == 0o640  # an existing file keeps its own

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(R.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        R.write_atomic(path, "new\n")
    assert path.read_text() == "old\n" and [p.name for p in path.parent.iterdir()] == ["r.md"]  # no temp left


def test_write_csv_is_atomic_and_keeps_the_old_file_when_a_row_fails(tmp_path):
    """write_csv truncated the file before writing its rows: a row that fails left half a CSV on disk."""

    class Bad:
        def __str__(self):
            raise RuntimeError("cannot format")

    path = R.write_csv(tmp_path / "r.csv", [{"a": 1, "b": 0.5}])
    assert R.read_csv(path) == [{"a": 1.0, "b": 0.5}] and path.read_bytes().endswith(b"\r\n")
    with pytest.raises(RuntimeError, match="cannot format"):
        R.write_csv(path, [{"a": 2, "b": 0.25}, {"a": Bad(), "b": 1.0}])
    assert R.read_csv(path) == [{"a": 1.0, "b": 0.5}] and [p.name for p in tmp_path.iterdir()] == ["r.csv"]


def test_check_known_names_the_first_unknown_and_the_choices():
    R.check_known("task", ["cue", "grid"], ["cue", "grid"])
    with pytest.raises(ValueError, match=r"unknown task 'gird'; choose from \['cue', 'grid'\]"):
        R.check_known("task", ["cue", "gird", "nope"], ["cue", "grid"])


def test_plot_panels_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    panels = {"grid": {"grpo": ([2, 4, 8], [0.1, 0.2, 0.3], [0.01, 0.02, 0.03]),
                       "gigpo": ([2, 4, 8], [0.2, 0.5, 0.7], None)},
              "cue": {"grpo": ([2, 4], [0.0, 0.1], None)}}
    p = R.plot_panels(tmp_path / "p.png", panels, "N", "pearson", logx=True, suptitle="t")
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="empty"):
        R.plot_panels(tmp_path / "q.png", {}, "x", "y")


def test_machine_lines_names_command_and_cpu(tmp_path):
    s = R.machine_lines(["agentgym-credit", "bench", "credit", "--quick"])
    assert "`agentgym-credit bench credit --quick`" in s and "cpu_count" in s
    (tmp_path / "r.md").write_text("# t\n\n" + s + "\n")
    assert R.read_command(tmp_path / "r.md") == "agentgym-credit bench credit --quick"
    assert R.read_command(tmp_path / "missing.md") is None
    assert list(R.progress(range(3), enable=False)) == [0, 1, 2]


def test_progress_without_tqdm_prints_a_line_at_the_start_every_interval_and_the_end(monkeypatch, capsys):
    import sys
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `from tqdm.auto import tqdm` now raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    ticks = iter(range(0, 1000, 4))  # a fake clock: 4 s per item, so the 10 s interval passes every 3rd item
    out = list(R.progress(range(7), total=7, desc="bench credit", every_s=10, clock=lambda: next(ticks)))
    assert out == list(range(7))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "bench credit: 0/7" and lines[-1].startswith("bench credit: done, 7/7")
    assert lines[1:-1] == ["bench credit: 3/7 (12 s)", "bench credit: 6/7 (24 s)"]
    assert list(R.progress(range(3), enable=False)) == [0, 1, 2] and capsys.readouterr().err == ""
