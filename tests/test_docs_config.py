"""docs/CONFIGURATION.md stays in step with config.yml.example and with the schema (bot/config.py).

Every key of the example must have its row in the page's key tables, in the example's order; every
row must name a key the schema accepts, with the schema's type, default and allowed values. A key
added to the example (or to the schema) without its row makes these tests fail.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.config import RENAMED, RETIRED, Config, ConfigError, config_from_dict

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "config.yml.example"
PAGE = ROOT / "docs" / "CONFIGURATION.md"
KEY_TABLE_HEADER = ("key", "type", "default", "allowed", "what it does")


@dataclasses.dataclass(frozen=True)
class Row:
    key: str
    type: str
    default: str  # the cell's text between backticks: a YAML value
    allowed: str
    what: str


def example_keys(path: Path) -> list[str]:
    """The example's keys as dotted paths, in the file's order: nested mappings give `section.key`,
    lists and scalars are leaves."""
    def walk(node: dict[str, Any], prefix: str) -> list[str]:
        keys = []
        for name, value in node.items():
            if isinstance(value, dict):
                keys += walk(value, f"{prefix}{name}.")
            else:
                keys.append(f"{prefix}{name}")
        return keys
    return walk(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, "")


def page_rows(path: Path) -> list[Row]:
    """The rows of the page's key tables (those whose header is KEY_TABLE_HEADER), in page order."""
    rows, in_key_table = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            in_key_table = False
            continue
        cells = [c.strip() for c in line.strip()[1:-1].split("|")]  # no cell holds a "|"
        if tuple(cells) == KEY_TABLE_HEADER:
            in_key_table = True
        elif in_key_table and not set(line) <= set("|-: "):
            assert len(cells) == len(KEY_TABLE_HEADER), f"a key row needs 5 cells: {line}"
            key = re.fullmatch(r"`([a-z_.]+)`", cells[0])
            assert key, f"the key cell is not one backticked key: {cells[0]}"
            default = re.fullmatch(r"`(.*)`", cells[2])
            assert default, f"{key.group(1)}: the default cell is not one backticked YAML value: {cells[2]}"
            rows.append(Row(key.group(1), cells[1], default.group(1), cells[3], cells[4]))
    return rows


def missing_from_page(example: Path, page: Path) -> list[str]:
    """Keys of the example that have no row in the page."""
    documented = {row.key for row in page_rows(page)}
    return [key for key in example_keys(example) if key not in documented]


def schema_field(key: str) -> tuple[dataclasses.Field[Any], Any] | None:
    """The schema's field for a dotted key and its type annotation; None if the schema has none."""
    cls: Any = Config
    *sections, name = key.split(".")
    for section in sections:
        hints = typing.get_type_hints(cls)
        if section not in hints or not dataclasses.is_dataclass(hints[section]):
            return None
        cls = hints[section]
    fields = {f.name: f for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
    hints = typing.get_type_hints(cls)
    if name not in fields or dataclasses.is_dataclass(hints[name]):
        return None
    return fields[name], hints[name]


def schema_default(f: dataclasses.Field[Any]) -> Any:
    return f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]


TYPE_WORDS = {bool: "boolean", int: "integer", float: "number", str: "text",
              list[str]: "list of text", list[int]: "list of integers"}


def type_words(tp: Any) -> str:
    """How the page names a schema type: `int | None` -> "integer or null"."""
    if isinstance(tp, types.UnionType):
        return " or ".join("null" if a is type(None) else TYPE_WORDS[a] for a in typing.get_args(tp))
    if typing.get_origin(tp) is list and dataclasses.is_dataclass(typing.get_args(tp)[0]):
        return "list"  # of ids or mappings (tournaments.arenas): the allowed column says which
    return TYPE_WORDS[tp]


def numbers_in(text: str) -> set[float]:
    return {float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", re.sub(r"(?<=\d),(?=\d{3})", "", text))}


def nested(key: str, value: Any) -> dict[str, Any]:
    """{"a.b": v} as the mapping a YAML file would give: {"a": {"b": v}}."""
    *sections, name = key.split(".")
    data: dict[str, Any] = {name: value}
    for section in reversed(sections):
        data = {section: data}
    return data


def row_problems(row: Row) -> list[str]:
    """What the page says about a key that the schema contradicts (empty when they agree)."""
    found = schema_field(row.key)
    if found is None:
        return [f"{row.key}: not a key bot/config.py accepts"]
    f, tp = found
    problems = []
    stated = yaml.safe_load(row.default)
    try:
        config_from_dict(nested(row.key, stated))
    except ConfigError as e:
        problems.append(f"{row.key}: the stated default {row.default} is refused: {e}")
    default = schema_default(f)
    if stated != default or isinstance(stated, bool) != isinstance(default, bool):  # 0 == False
        problems.append(f"{row.key}: the page says the default is {row.default}, the schema {default!r}")
    if row.type != type_words(tp):
        problems.append(f"{row.key}: the page says type '{row.type}', the schema {type_words(tp)!r}")
    for choice in f.metadata.get("choices") or ():
        if f"`{choice}`" not in row.allowed:
            problems.append(f"{row.key}: allowed value `{choice}` is not in the allowed column")
    for bound in ("lo", "hi"):
        value = f.metadata.get(bound)
        if value is not None and float(value) not in numbers_in(row.allowed):
            problems.append(f"{row.key}: the bound {value} ({bound}) is not in the allowed column")
    return problems


def page_problems(page: Path) -> list[str]:
    rows = page_rows(page)
    keys = [row.key for row in rows]
    problems = [f"{key}: more than one row" for key in sorted({k for k in keys if keys.count(k) > 1})]
    for row in rows:
        problems += row_problems(row)
    return problems


# ---------------------------------------------------------------- the page against the example


def test_every_key_of_the_example_has_its_row():
    keys = example_keys(EXAMPLE)
    assert len(keys) > 80  # the walk found the sections' keys, not only the top level
    assert missing_from_page(EXAMPLE, PAGE) == []


def test_rows_follow_the_example_grouped_as_the_file_is():
    assert [row.key for row in page_rows(PAGE)] == example_keys(EXAMPLE)


def test_a_key_added_to_the_example_without_its_row_is_reported(tmp_path):
    copy = tmp_path / "config.yml.example"
    text = EXAMPLE.read_text(encoding="utf-8")
    text = re.sub(r"^records:.*$", "\\g<0>\n  brand_new_key: 1", text, count=1, flags=re.M)
    copy.write_text(text + "new_section:\n  flag: true\n", encoding="utf-8")
    assert missing_from_page(copy, PAGE) == ["records.brand_new_key", "new_section.flag"]


def test_a_list_is_one_key_and_a_mapping_a_section(tmp_path):
    example = tmp_path / "example.yml"
    example.write_text("a: 1\nb:\n  c: [x, y]\n  d:\n    e: null\n", encoding="utf-8")
    assert example_keys(example) == ["a", "b.c", "b.d.e"]


# ---------------------------------------------------------------- the page against the schema


def test_every_row_names_a_schema_key_with_its_type_default_and_allowed_values():
    assert page_problems(PAGE) == []


def test_every_schema_key_has_its_row():
    def walk(cls: Any, prefix: str) -> list[str]:
        hints = typing.get_type_hints(cls)
        keys = []
        for f in dataclasses.fields(cls):
            if f.metadata.get("internal"):
                continue
            if dataclasses.is_dataclass(hints[f.name]):
                keys += walk(hints[f.name], f"{prefix}{f.name}.")
            else:
                keys.append(f"{prefix}{f.name}")
        return keys
    documented = {row.key for row in page_rows(PAGE)}
    assert [key for key in walk(Config, "") if key not in documented] == []


def test_renamed_and_retired_keys_are_listed_with_what_became_of_them():
    text = PAGE.read_text(encoding="utf-8")
    for old in (*RENAMED, *RETIRED):
        assert re.search(rf"^\| `{re.escape(old)}` \|", text, re.M), old


@pytest.mark.parametrize("change, expected", [
    (("| `engine.hash_total_mb` | integer | `64` |", "| `engine.hash_total_mb` | integer | `32` |"),
     "engine.hash_total_mb: the page says the default is 32, the schema 64"),
    (("| `engine.ponder` | boolean |", "| `engine.pondering` | boolean |"),
     "engine.pondering: not a key bot/config.py accepts"),
    (("| `chat.eval_for` | text |", "| `chat.eval_for` | list of text |"),
     "chat.eval_for: the page says type 'list of text', the schema 'text'"),
    (("`nobody`, `spectators`, `everyone`", "`nobody`, `spectators`"),
     "chat.eval_for: allowed value `everyone` is not in the allowed column"),
    (("| 1 to 64 | Simultaneous", "| at least 1 | Simultaneous"),
     "challenge.concurrency: the bound 64 (hi) is not in the allowed column"),
    (("| `resign.enabled` | boolean | `false` |", "| `resign.enabled` | boolean | `0` |"),
     "resign.enabled: the stated default 0 is refused"),
])
def test_a_row_that_contradicts_the_schema_is_reported(tmp_path, change, expected):
    text = PAGE.read_text(encoding="utf-8")
    old, new = change
    assert text.count(old) == 1, old
    copy = tmp_path / "CONFIGURATION.md"
    copy.write_text(text.replace(old, new), encoding="utf-8")
    problems = page_problems(copy)
    assert any(p.startswith(expected) for p in problems), problems


# ---------------------------------------------------------------- links between the owner's pages

OWNER_PAGES = ("CONFIGURATION.md", "FEATURES.md", "ACCOUNT.md")
# The docs pages by task (some written beside these) and the two that stay.
DOCS_PAGES = {*OWNER_PAGES, "INSTALL.md", "DEPLOY.md", "ENGINE.md", "PERFORMANCE.md", "RELIABILITY.md",
              "DEVELOPMENT.md", "LICHESS.md", "CONTRACTS.md", "TOURNAMENTS.md", "CONSOLE.md"}


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    heads = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def broken_links(page: Path) -> list[str]:
    """Links from `page` to a docs page that is not one of DOCS_PAGES, or to a heading of one of the
    owner's pages (or of LICHESS.md, CONTRACTS.md) that is not there."""
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
        if "://" in target or target.startswith("../"):
            continue
        name, _, anchor = target.partition("#")
        name = name or page.name
        if name not in DOCS_PAGES:
            problems.append(f"{page.name}: link to {target}: no such docs page")
        elif anchor and (page.parent / name).exists() and anchor not in anchors(page.parent / name):
            problems.append(f"{page.name}: link to {target}: no such heading")
    return problems


@pytest.mark.parametrize("name", OWNER_PAGES)
def test_links_name_docs_pages_and_headings_that_exist(name):
    page = ROOT / "docs" / name
    assert page.exists()
    assert broken_links(page) == []


def test_a_link_to_a_missing_heading_is_reported(tmp_path):
    for name in ("CONFIGURATION.md", "FEATURES.md"):
        (tmp_path / name).write_text((ROOT / "docs" / name).read_text(encoding="utf-8"), encoding="utf-8")
    page = tmp_path / "FEATURES.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[x](CONFIGURATION.md#no-such-section) "
                    "[y](FEATURE.md)\n", encoding="utf-8")
    assert broken_links(page) == ["FEATURES.md: link to CONFIGURATION.md#no-such-section: no such heading",
                                  "FEATURES.md: link to FEATURE.md: no such docs page"]
