"""axe-core (WCAG 2.0-2.2 A and AA, and best practice) on every page of the built book, in light and
dark, on a desktop (1440x900) and a phone (390x844, touch): any violation fails, listed by page,
rule and element."""
from __future__ import annotations

import pytest

from a11y_site import AXE, CONFIGS, pages  # noqa: E402  (same folder)

pytestmark = pytest.mark.browser
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


def axe(page) -> list[dict]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate("""async (tags) => {
      const r = await axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
      return r.violations.map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.target.join(" ") + " :: " + n.failureSummary.split("\\n").slice(1, 2).join("")) }));
    }""", TAGS)


@pytest.mark.parametrize("config", list(CONFIGS))
def test_no_axe_violations(chromium, book_url, built_book, config):
    assert AXE.exists(), f"{AXE} is missing: run scripts/install.sh (npm package axe-core)"
    base, names = book_url, pages(built_book)
    assert len(names) >= 10, names
    context = chromium.new_context(**CONFIGS[config])
    context.set_default_timeout(20000)
    page = context.new_page()
    found = []
    try:
        for name in names:
            page.goto(base + name, wait_until="load")
            for v in axe(page):
                found += [f"{name} {v['id']}: {n}" for n in v["nodes"][:5]]
                if len(v["nodes"]) > 5:
                    found.append(f"{name} {v['id']}: … and {len(v['nodes']) - 5} more")
    finally:
        context.close()
    assert not found, f"{len(found)} axe violations ({config}):\n" + "\n".join(found)
