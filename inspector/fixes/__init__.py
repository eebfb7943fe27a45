"""From why to what to change: for every finding, candidate edits of the user's file that the tool
has compiled, checked and ranked.

    report = fix("kernels/jagged.py", target="sm_90")
    for ff in report.findings:
        best = ff.candidates[0]          # ranked: finding gone, widths, spills, occupancy ...
        print(best.title, best.assumptions_hold, best.checked)
        print(best.diff)

How (each step in its own module):
1. `candidates.for_finding`: the edits each finding's cause calls for. For a narrow access, the
   hints go where the TTIR shows the fact lost (`analysis.fact_loss`, `analysis.hint_sites`,
   `hints`), and a mask no promise can make constant gets its partial block peeled off (`peel`);
   for a limit, a launch option or constexpr; for tf32, `input_precision`.
2. Every candidate compiles in the sandbox, several at once through the warm pool, with the same
   kernel, target and overrides as the original; SASS is left for later (`defer`).
3. Edits that compose (`compose`): the candidates that improved an access without finishing,
   merged with the others and with layout steps, compiled in further rounds within a budget.
4. `check.check_candidates`: the file's example runs, as written and as each candidate edits it,
   under Triton's interpreter (GPU-free); outputs are compared launch by launch, and every promise
   a hint makes (scalars and blocks) is checked against the values that reached it
   (`assumptions_hold`). A promise resting on a kernel argument is also checked against the
   recorded launch's value.
5. `evaluate.score` ranks: the finding gone first, then what improved; a candidate whose promise
   the data breaks, or whose outputs differ, is never ranked above one that holds.

`on_result(finding_index, candidate)` is called as each candidate's compile lands, before checks,
so a page can show results as they come. A finding whose every edit compiled to the same figures
lists them, with the figure each reached (`FindingFixes.tried`).
"""

from .candidates import Candidate
from .search import FindingFixes, FixReport, Tried, fix, with_overrides

__all__ = ["Candidate", "FindingFixes", "FixReport", "Tried", "fix", "with_overrides"]
