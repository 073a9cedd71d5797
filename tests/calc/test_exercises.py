"""calc.exercises: reading exercises from a chapter, validating a check without running it,
and checking a reader's kernel (correctness first, then budgets, at the reader's own lines)."""

import json

import pytest

from calc import exercises as E

CHAPTER = '# A chapter {#sec-x}\n\nSome prose.\n\n::: {.exercise #ex-coalesced-copy}\n#### Exercise: a copy that reads whole sectors\n\nThe strided copy below gives thread `i` of block `b` the element `i * cuda.gridDim.x + b`, so a warp\'s\n32 loads land in 32 different sectors. Rewrite the index so that a warp reads 32 neighbouring\nelements. Its loads and stores should each touch at most 4 sectors\nper request: the 128 bytes a warp asks for, in 32-byte sectors.\n\n```{.python .starter}\ndef copy(A, B, n):\n    i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x\n    if i < n:\n        B[i] = A[i]\n```\n\n::: {.hint}\nNeighbouring threads of a warp have neighbouring `cuda.threadIdx.x`. Which term of the index should\n`cuda.threadIdx.x` be in?\n:::\n\n::: {.hint}\n`i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`.\n:::\n\n::: {.solution}\n```{.python}\ndef copy(A, B, n):\n    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x\n    if i < n:\n        B[i] = A[i]\n```\n\nA warp now asks for 32 consecutive FP32 values: 128 bytes, 4 sectors, the least possible.\n:::\n\n```{.python .check}\nsizes = [1, 31, 32, 33, 255, 1000, 4096]\nmeasure = 4096\nrun = 8\n\ndef inputs(n, rng):\n    return (Array("A", [rng.uniform(-1, 1) for _ in range(n)]), Array("B", n), n)\n\ndef launch_shape(n):\n    return ((n + 255) // 256,), (256,)\n\ndef expected(n, A, B, _n):\n    return {"B": list(A.data)}\n\ndef minimum(n):\n    return 2 * 4 * n\n\nbudgets = ["sectors_per_request <= 4", "hbm_bytes <= 1.1 * minimum", "global_requests <= 256"]\n```\n:::\n\nMore prose.\n'


def one(text=CHAPTER):
    exs = E.read_exercises(text, "chapters/x.qmd")
    assert len(exs) == 1
    return exs[0]


def line_of(text, needle):
    return next(k + 1 for k, ln in enumerate(text.split("\n")) if needle in ln)


def test_reads_the_parts_with_their_lines():
    ex = one()
    assert ex.id == "ex-coalesced-copy"
    assert ex.title == "Exercise: a copy that reads whole sectors"
    assert ex.line == line_of(CHAPTER, "{.exercise #ex-coalesced-copy}")
    assert ex.starter_line == line_of(CHAPTER, "{.python .starter}") + 1
    assert ex.check_line == line_of(CHAPTER, "{.python .check}") + 1
    assert ex.starter.splitlines()[1].strip() == "i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x"
    assert ex.solution.splitlines()[1].strip() == "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"
    assert len(ex.hints) == 2 and ex.hints[1] == "`i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`."
    assert ex.explanation.startswith("A warp now asks for 32 consecutive")
    assert "Rewrite the index" in ex.statement and "def copy" not in ex.statement
    assert "More prose" not in ex.statement
    assert E.validate(ex) == []


@pytest.mark.parametrize("edit, needle, message", [
    (("budgets = [", "budget = ["), "budget = [", "unknown key 'budget'"),
    (("sectors_per_request <= 4", "sector_per_request <= 4"), "sector_per_request", "unknown budget name 'sector_per_request'"),
    (("sectors_per_request <= 4", "sectors_per_request <= 4 * nope"), "nope", "unknown name 'nope'"),
    (("sectors_per_request <= 4", "sectors_per_request about 4"), "about", "is not NAME OP EXPR"),
    (("def minimum(n):", "def _minimum(n):"), "hbm_bytes <= 1.1", "defines no minimum(n)"),
    (("def launch_shape(n):", "def shape(n):"), "def shape(n):", "unknown key 'shape'"),
    (("::: {.solution}", "::: {.answer}"), "{.exercise #ex-coalesced-copy}", "has no solution"),
    (("```{.python .starter}", "```{.python}"), "{.exercise #ex-coalesced-copy}", "has no starter"),
    (("{.exercise #ex-coalesced-copy}", "{.exercise #coalesced-copy}"), "{.exercise #coalesced-copy}", "starting with 'ex-'"),
])
def test_validation_finds_each_problem_at_its_line(edit, needle, message):
    text = CHAPTER.replace(*edit)
    assert text != CHAPTER
    problems = E.validate(one(text))
    found = [(line, msg) for line, msg in problems if message in msg]
    assert found, problems
    assert found[0][0] == line_of(text, needle), (problems, line_of(text, needle))


def test_a_statement_at_top_level_of_a_check_is_refused():
    text = CHAPTER.replace("budgets = [", "print('hi')\nbudgets = [")
    problems = E.validate(one(text))
    assert problems and "holds only imports" in problems[0][1]
    assert problems[0][0] == line_of(text, "print('hi')")


def test_four_hints_are_too_many_and_a_foreign_exercise_attribute_is_refused():
    hint = "::: {.hint}\nMore.\n:::\n\n"
    text = CHAPTER.replace("::: {.solution}", hint * 3 + "::: {.solution}")
    assert any("5 hints" in m for _, m in E.validate(one(text)))
    text = CHAPTER.replace("::: {.hint}", '::: {.hint exercise="ex-other"}', 1)
    assert any("must be the same" in m for _, m in E.validate(one(text)))


def test_starter_fails_on_its_budget_and_names_the_line():
    ex = one()
    spec = E.spec_of(ex)
    r = E.check_code(ex.starter, spec)
    assert r["stage"] == "budget" and not r["passed"]
    assert [s["ok"] for s in r["sizes"]] == [True] * len(spec.sizes)
    row = r["budgets"][0]
    assert row["name"] == "sectors_per_request" and row["measured"] == 32 and row["limit"] == 4 and not row["ok"]
    assert r["budgets"][1]["ok"]
    assert r["line"] == 4  # B[i] = A[i], in the reader's own numbering
    # by how much: the reader learns the size of the gap, not only that there is one
    assert "sectors_per_request is 32 at size 4,096, the budget is <= 4: 28 over, 8 times the limit (most of it on line 4)" \
        in r["message"], r["message"]
    json.dumps(r)


def test_reference_passes_with_exact_counts():
    ex = one()
    spec = E.spec_of(ex)
    r = E.check_code(ex.solution, spec)
    assert r["passed"] and r["stage"] == "passed"
    assert r["totals"]["sectors_per_request"] == 4.0
    assert r["totals"]["hbm_bytes"] == 2 * 4 * 4096
    assert r["totals"]["global_loads"] == 4096 // 32
    assert [row["line"] for row in r["lines"]] == [4]
    assert r["point"]["hbm_bytes"] == 32768
    json.dumps(r)


def test_wrong_value_is_reported_with_size_index_expected_got_and_writer_line():
    ex = one()
    spec = E.spec_of(ex)
    code = ex.solution.replace("B[i] = A[i]", "B[i] = A[i] + 1.0")
    r = E.check_code(code, spec)
    assert r["stage"] == "mismatch" and r["size"] == "1" and r["element"] == "B[0]"
    assert r["got"] == pytest.approx(r["expected"] + 1.0, rel=1e-5)
    assert r["line"] == 4 and "written by line 4" in r["message"]


def test_a_missed_element_at_a_non_multiple_size():
    ex = one()
    spec = E.spec_of(ex)
    code = ex.solution.replace("if i < n:", "if i < n and i != 32:")
    r = E.check_code(code, spec)
    assert r["stage"] == "mismatch" and r["size"] == "33" and r["element"] == "B[32]"
    assert r["got"] == "never written"


def test_a_missing_guard_is_an_out_of_bounds_error_at_the_readers_line():
    ex = one()
    spec = E.spec_of(ex)
    code = "def k(A, B, n):\n    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x\n    B[i] = A[i]\n"
    r = E.check_code(code, spec)
    assert r["stage"] == "error" and r["kind"] == "OutOfBounds" and r["line"] == 3
    assert r["size"] == "1" and "outside global array A" in r["message"]


def test_syntax_error_at_the_readers_line():
    ex = one()
    r = E.check_code("def k(A, B, n):\n    x = = 1\n", E.spec_of(ex))
    assert r["stage"] == "compile" and r["line"] == 2 and r["message"].startswith("line 2:")


def test_run_prints_the_outputs_at_the_run_size():
    ex = one()
    spec = E.spec_of(ex)
    r = E.run_code(ex.solution, spec)
    assert r["ok"] and r["size"] == "8" and len(r["outputs"]["B"]) == 8
    args = spec.inputs(8, E._rng(spec, 8))
    assert r["outputs"]["B"] == pytest.approx(args[0].data, rel=1e-6)


def test_reference_budget_uses_the_reference_figure():
    text = CHAPTER.replace('budgets = ["sectors_per_request <= 4"', 'budgets = ["global_loads <= reference", "sectors_per_request <= 4"')
    ex = one(text)
    spec = E.spec_of(ex)
    r = E.check_code(ex.solution, spec, ref_code=ex.solution)
    assert r["passed"] and r["budgets"][0]["limit"] == r["budgets"][0]["measured"] == 128


def test_verify_requires_a_failing_starter_and_a_passing_solution():
    ex = one()
    assert E.verify(ex) == []
    lazy = one(CHAPTER.replace("i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x", "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"))
    problems = E.verify(lazy)
    assert len(problems) == 1 and "starter of #ex-coalesced-copy passes" in problems[0][1]
    assert problems[0][0] == lazy.starter_line
    broken = CHAPTER.replace("    if i < n:\n        B[i] = A[i]\n```\n\nA warp", "    B[i] = A[i]\n```\n\nA warp")
    assert broken != CHAPTER
    problems = E.verify(one(broken))
    assert len(problems) == 1 and "reference solution" in problems[0][1] and "outside global array" in problems[0][1]
    assert problems[0][0] == one(broken).solution_line + 2


def test_page_data_is_json_and_carries_the_reference_measurement():
    data = E.page_data(one())
    text = json.dumps(data)
    assert data["reference"]["figures"]["sectors_per_request"] == 4.0
    assert data["reference"]["minimum"] == 32768
    assert "def inputs" in data["check"] and json.loads(text)["id"] == "ex-coalesced-copy"


MEASURED_CPU = {"name": "yours-cpu", "label": "Your CPU, one core (measured in this browser)", "kind": "cpu",
                "measured": {"date": "2026-11-26T10:00:00Z"},
                "specs": {"mem_bw": {"value": 8e9, "unit": "B/s"}},
                "peaks": {"fp32": {"value": 2e10, "unit": "FLOP/s"}}}


def test_a_check_places_the_kernel_and_the_reference_on_the_readers_measured_device():
    ex = one()
    data = E.page_data(ex)
    bad = {**MEASURED_CPU, "name": "yours-gpu", "specs": {"mem_bw": {"value": -1, "unit": "B/s"}}}
    out = json.loads(E.handle(json.dumps({"op": "check", "code": ex.solution, "exercise": data,
                                          "measured": [MEASURED_CPU, bad]})))
    assert out["passed"]
    sheet = out["point"]
    assert sheet["device"] == "a100-sxm-40gb" and sheet["label"] == "NVIDIA A100 SXM4 40GB"
    yours, broken = out["measured_points"]
    mine = yours["point"]
    # the same launch (its FLOPs and bytes are the simulator's), under the measured roofs
    assert (mine["flops"], mine["hbm_bytes"]) == (sheet["flops"], sheet["hbm_bytes"]) == (0, 32768)
    assert (mine["peak_flops"], mine["mem_bw"]) == (2e10, 8e9)
    assert mine["time_s"] == pytest.approx(32768 / 8e9) and mine["bound"] == "memory"
    assert "measured in this browser" in yours["label"] and yours["dtype_note"] is None
    assert yours["reference_point"]["hbm_bytes"] == data["reference"]["point"]["hbm_bytes"]
    assert broken["name"] == "yours-gpu" and "mem_bw must be a positive number" in broken["error"]


def test_without_a_measurement_or_before_correctness_there_are_no_measured_points():
    ex = one()
    data = E.page_data(ex)
    plain = json.loads(E.handle(json.dumps({"op": "check", "code": ex.solution, "exercise": data})))
    assert plain["passed"] and plain["measured_points"] == []
    wrong = json.loads(E.handle(json.dumps({"op": "check", "code": ex.solution.replace("i < n", "i < n - 1"),
                                            "exercise": data, "measured": [MEASURED_CPU]})))
    assert not wrong["passed"] and wrong["point"] is None and wrong["measured_points"] == []


def test_an_exercise_in_a_format_the_device_has_no_peak_for_is_drawn_with_its_fp32_peak():
    spec = E.spec_of(one())
    spec.dtype = "fp16"
    result = {"point": {"flops": 1000, "hbm_bytes": 100}, "reference_point": None}
    (entry,) = E.measured_points(result, spec, [MEASURED_CPU])
    p = entry["point"]
    assert entry["dtype_note"] == "no measured FP16 peak; drawn with its FP32 one" and p["dtype"] == "fp32"
    assert p["intensity"] == 10.0 and p["time_s"] == pytest.approx(max(1000 / 2e10, 100 / 8e9))
    assert p["flops_per_s"] == pytest.approx(1000 / p["time_s"]) and entry["reference_point"] is None


def test_a_kernel_that_raises_systemexit_is_refused_not_an_internal_error():
    import json
    ex = one()
    data = E.page_data(ex)
    for body in ("    raise SystemExit\n", "    raise KeyboardInterrupt\n", "    exit()\n"):
        code = "from numba import cuda\n\n@cuda.jit\ndef copy(A, B, n):\n" + body
        out = json.loads(E.handle(json.dumps({"op": "check", "code": code, "exercise": data})))
        assert out["stage"] == "compile" and not out["passed"] and out["line"] == 5, out


def test_what_verify_found_is_kept_by_the_exercise_not_its_place_and_a_problem_never(tmp_path, monkeypatch):
    """Where the build names a folder (BOOK_EXERCISES_CACHE), verify's answer for an exercise is
    kept: found again for the same exercise moved down its page, worked out again when its check
    changes; a problem (with its line) is not kept."""
    monkeypatch.setenv(E.CACHE_ENV, str(tmp_path))
    calls = []
    monkeypatch.setattr(E, "verify", lambda ex: calls.append(ex.check) or [])
    assert E.verify_kept(one()) == [] and len(calls) == 1
    assert E.verify_kept(one(CHAPTER.replace("Some prose.", "Some prose.\n\nA new paragraph."))) == []
    assert len(calls) == 1, "the same exercise, further down: kept"
    assert E.verify_kept(one(CHAPTER.replace("run = 8", "run = 16"))) == [] and len(calls) == 2
    monkeypatch.setattr(E, "verify", lambda ex: calls.append(ex.check) or [(3, "a problem")])
    bad = one(CHAPTER.replace("run = 8", "run = 32"))
    assert E.verify_kept(bad) == [(3, "a problem")] and E.verify_kept(bad) == [(3, "a problem")]
    assert len(calls) == 4, "a problem is found again each time"
    monkeypatch.delenv(E.CACHE_ENV)
    E.verify_kept(one())
    assert len(calls) == 5, "nothing is kept without the folder"


def test_warm_compiles_the_check_and_runs_the_code_once_without_checking_it(monkeypatch):
    """The page warms its worker for an exercise on screen (assets/js/exercises.js): the check is
    compiled and kept for the Check that follows, the starter Run once; no verdict is given."""
    ex = one()
    E._SPECS.clear()
    ran = []
    real = E.run_code
    monkeypatch.setattr(E, "run_code", lambda code, spec, n=None: ran.append(code) or real(code, spec, n))
    out = json.loads(E.handle(json.dumps({"op": "warm", "code": ex.starter, "exercise": {"id": ex.id, "check": ex.check}})))
    assert out == {"ok": True, "warm": ex.id} and ran == [ex.starter]
    assert (ex.id, ex.check, None) in E._SPECS and "passed" not in out
