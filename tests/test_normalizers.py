"""field_normalizers (issue 13): named, composable, applied before comparison."""

from __future__ import annotations

import unicodedata

import polars as pl
import pytest
import reference

from jsoneval_polars import evaluate
from jsoneval_polars.config import ConfigError, parse_config
from jsoneval_polars.values import normalized


@pytest.mark.parametrize(
    ("names", "text", "expected"),
    [
        (["casefold"], "straße ς ﬁ", "strasse σ fi"),
        (["nfkc"], "ｶﾀｶﾅ ① ﬁ x²", "カタカナ 1 fi x2"),
        (["strip_punctuation"], "a.b-c, (d)! «e» ¿f?", "abc d e f"),
        (["collapse_whitespace"], "  a \t b\n\nc ", "a b c"),
        (["digits_only"], "+1 (555) 010-99 ext. ٣", "155501099"),
        (["strip_punctuation", "collapse_whitespace"], "a - b", "a b"),
        (["nfkc", "digits_only"], "①２３", "123"),
    ],
)
def test_each_normalizer_on_hand_made_text(names, text, expected):
    assert pl.select(normalized(pl.lit(text), tuple(names))).item() == expected
    assert reference.normalize(text, names) == expected


def test_casefold_equals_python_on_every_character():
    chars = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    got = pl.select(normalized(pl.lit(chars), ("casefold",))).item()
    assert got == chars.casefold()


def test_strip_punctuation_agrees_with_unicodedata_on_the_bmp():
    chars = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
    got = pl.select(normalized(pl.lit(chars), ("strip_punctuation",))).item()
    expected = "".join(c for c in chars if not unicodedata.category(c).startswith("P"))
    differ = set(got) ^ set(expected)  # characters Unicode versions classify differently
    assert len(differ) <= 8, sorted(differ)


def test_normalizers_apply_before_comparison_and_outputs_keep_the_values():
    gt = {"phone": "+1 (555) 010-9999", "name": "Müller-Lüdenscheidt", "ref": "INV 001",
          "total": 12}
    aio = {"phone": "555.010.9999 (+1)", "name": "MULLER LUDENSCHEIDT", "ref": "inv-001",
           "total": "12"}
    config = {
        "default_text_strategy": "EXACT",
        "field_normalizers": {"phone": ["digits_only"], "name": ["nfkc", "strip_punctuation"],
                              "ref": ["strip_punctuation", "collapse_whitespace"]},
    }
    result = evaluate([{"doc_id": "d", **gt}], [{"doc_id": "d", **aio}], config=config)
    ref = reference.reference_evaluate([{"doc_id": "d", "gt": gt, "aio": aio}], config)
    got = dict(result.fields.select("path", "match").iter_rows())
    assert got == {f["path"]: f["match"] for f in ref["fields"]["d"]}
    # digits 15550109999 both; "müllerlüdenscheidt" vs "muller ludenscheidt" differ (no accent
    # folding); "inv 001" vs "inv001": punctuation goes, the space stays
    assert got == {"phone": False, "name": False, "ref": False, "total": True}
    phone = result.fields.filter(pl.col("path") == "phone")["aio_value"].item()
    assert phone == "555.010.9999 (+1)"
    config["field_normalizers"]["ref"] = ["strip_punctuation", "collapse_whitespace"]
    config["field_normalizers"]["phone"] = ["digits_only"]
    aio["phone"] = "(+1) 555 010 9999"
    result = evaluate([{"doc_id": "d", **gt}], [{"doc_id": "d", **aio}], config=config)
    assert dict(result.fields.select("path", "match").iter_rows())["phone"] is True


def test_normalizer_names_are_validated():
    with pytest.raises(ConfigError, match="did you mean 'casefold'"):
        parse_config({"field_normalizers": {"name": ["casefolds"]}})
    with pytest.raises(ConfigError, match="field_normalizers.name must be a list of strings"):
        parse_config({"field_normalizers": {"name": [1]}})
    assert parse_config({"field_normalizers": {"a": "nfkc"}}).field_normalizers == {"a": ("nfkc",)}
