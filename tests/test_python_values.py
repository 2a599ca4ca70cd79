"""Records built in Python score as their JSON does (python_values.py, DECISIONS 113).

The oracle for pydantic's ``model_dump()`` records is pydantic's own JSON mode
(``model_dump_json``); numpy's and pandas' values are checked against JSON written by hand.
Both walkers (the kernel's and the Python reference) must give the same tables."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import uuid
from collections import OrderedDict, defaultdict

import numpy as np
import pytest

from jsoneval_polars import evaluate
from jsoneval_polars.flatten import flatten_native, flatten_python
from jsoneval_polars.python_values import NoJsonMeaning, json_value

pydantic = pytest.importorskip("pydantic")


class Status(enum.StrEnum):
    PAID = "paid"
    OPEN = "open"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Currency(enum.Enum):
    EUR = "EUR"
    USD = "USD"


class Line(pydantic.BaseModel):
    description: str
    amount: decimal.Decimal
    quantity: int


class Invoice(pydantic.BaseModel):
    invoice_id: uuid.UUID
    status: Status
    priority: Priority
    currency: Currency
    issued: datetime.date
    created: datetime.datetime
    due_time: datetime.time | None
    total: decimal.Decimal
    tags: tuple[str, ...]
    lines: list[Line]
    note: str | None = None


def _invoice(i: int) -> Invoice:
    return Invoice(
        invoice_id=uuid.UUID(int=i), status=Status.PAID if i % 2 else Status.OPEN,
        priority=Priority.HIGH, currency=Currency.EUR, issued=datetime.date(2024, 1, 1 + i),
        created=datetime.datetime(2024, 1, 2, 3, 4, 5 + i),
        due_time=datetime.time(17, 30) if i % 3 else None,
        total=decimal.Decimal(f"{i}.10"), tags=("a", f"t{i}"),
        lines=[Line(description=f"item {j}", amount=decimal.Decimal(f"{j}.50"), quantity=j)
               for j in range(i % 4)],
    )


@pytest.mark.parametrize("i", range(6))
def test_a_model_dump_is_its_json(i):
    model = _invoice(i)
    assert json_value(model.model_dump()) == json.loads(model.model_dump_json())


def test_model_dumps_score_as_their_json_on_either_side():
    dumps = [{"doc_id": f"d{i}", **_invoice(i).model_dump()} for i in range(6)]
    texts = [{"doc_id": f"d{i}", **json.loads(_invoice(i).model_dump_json())} for i in range(6)]
    for gt, aio in ((dumps, texts), (texts, dumps), (dumps, dumps)):
        r = evaluate(gt, aio)
        assert r.errors.height == 0, r.errors["error"].to_list()
        assert r.documents.height == 6
        both = r.fields.filter(r.fields["gt_present"] & r.fields["aio_present"])
        assert both["match"].fill_null(True).all()
        assert (both["gt_value"].eq_missing(both["aio_value"])).all()
        assert r.summary["micro_f1"] == 1.0


def test_numpy_and_subclass_values_by_hand():
    value = {
        "i": np.int64(3), "f": np.float32(0.5), "b": np.bool_(False), "m": np.array([[1, 2]]),
        "p": Priority.LOW, "c": Currency.USD, "s": Status.OPEN,
        "d": defaultdict(list, {"k": [1]}), "o": OrderedDict(z=1), Status.PAID: "key",
        "t": (1, (2, 3)),
    }
    assert json_value(value) == {
        "i": 3, "f": 0.5, "b": False, "m": [[1, 2]], "p": 1, "c": "USD", "s": "open",
        "d": {"k": [1]}, "o": {"z": 1}, "paid": "key", "t": [1, [2, 3]],
    }
    assert all(type(k) is str for k in json_value(value))


def test_plain_json_is_returned_as_it_is():
    doc = {"a": [1, {"b": "x"}], "c": None, "d": 1.5}
    assert json_value(doc) is doc


def test_a_value_with_no_json_meaning_is_still_refused_by_its_path():
    with pytest.raises(NoJsonMeaning, match="value of type set has no JSON meaning"):
        json_value({"a": {1, 2}})
    r = evaluate([{"doc_id": "a", "d": datetime.date(2024, 1, 1), "s": {1}},
                  {"doc_id": "b", "d": datetime.date(2024, 1, 1), "n": np.int64(2)}],
                 [{"doc_id": "a", "d": "2024-01-01"}, {"doc_id": "b", "d": "2024-01-01", "n": 2}])
    assert r.errors["error"].to_list() == ["value of type set at 's' has no JSON meaning",
                                           "left out: its GT document is not usable"]
    assert r.documents["doc_id"].to_list() == ["b"] and r.summary["micro_f1"] == 1.0


def test_both_walkers_give_the_same_tables_as_for_the_json():
    """The kernel takes the converted documents, the Python reference converts too, and both
    give the tables of the models' JSON; item ids run on around a document left out (a set)."""
    models = [_invoice(i) for i in range(5)]
    bad = {"s": {1}, "lines": [{"a": 1}]}
    dumps = [m.model_dump() for m in models]
    texts = [json.loads(m.model_dump_json()) for m in models]
    docs = [*dumps[:2], bad, dumps[2], None, *dumps[3:]]
    reference = flatten_python([*texts[:2], bad, texts[2], None, *texts[3:]], item_base=7)
    for walked in (flatten_python(docs, item_base=7), flatten_native(docs, item_base=7)):
        assert walked.errors == reference.errors == [
            (2, "value of type set at 's' has no JSON meaning")]
        assert walked.next_item == reference.next_item
        for name in ("leaves", "items", "members"):
            assert getattr(walked, name).equals(getattr(reference, name)), name


def test_pandas_values():
    pd = pytest.importorskip("pandas")
    value = {"ts": pd.Timestamp("2024-01-02 03:04:05"), "nat": pd.NaT, "na": pd.NA,
             "n": pd.array([1, None], dtype="Int64")[0]}
    assert json_value(value) == {"ts": "2024-01-02T03:04:05", "nat": None, "na": None, "n": 1}


def test_ids_of_other_types_read_as_their_json():
    """A UUID or numpy id (a model's `invoice_id: UUID`) pairs as its text; a float, a bool or
    a set is still no id."""
    gt = [{"doc_id": uuid.UUID(int=1), "x": 1}, {"doc_id": np.int64(2), "x": 1},
          {"doc_id": Status.PAID, "x": 1}, {"doc_id": 1.5, "x": 1}, {"doc_id": True, "x": 1}]
    aio = [{"doc_id": str(uuid.UUID(int=1)), "x": 1}, {"doc_id": 2, "x": 1},
           {"doc_id": "paid", "x": 1}]
    r = evaluate(gt, aio)
    assert sorted(r.documents["doc_id"].to_list()) == sorted(
        ["00000000-0000-0000-0000-000000000001", "2", "paid"])
    assert r.errors["error"].to_list() == ["doc_id must be a string or an integer; got 1.5",
                                           "doc_id must be a string or an integer; got True"]


def test_scores_given_as_numpy_numbers_or_decimals():
    """A safety or a confidence may be a numpy float32 (a model's score) or a Decimal; a
    bool, numpy's included, or NaN is still no score."""
    gt, aio = [{"doc_id": "a", "x": 1}, {"doc_id": "b", "x": 2}], [{"doc_id": "a", "x": 1},
                                                                    {"doc_id": "b", "x": 3}]
    r = evaluate(gt, aio, safety={"a": np.float32(0.5), "b": decimal.Decimal("0.25")})
    assert r.documents.sort("doc_id")["safety"].to_list() == [0.5, 0.25]
    for bad in (np.bool_(True), float("nan"), "0.5"):
        with pytest.raises(ValueError, match="safety of document 'a' must be a number"):
            evaluate(gt, aio, safety={"a": bad})
    confidences = [{"doc_id": "a", "x": np.float32(0.75)},
                   {"doc_id": "b", "x": decimal.Decimal("0.5")}]
    plain = [{"doc_id": "a", "x": 0.75}, {"doc_id": "b", "x": 0.5}]
    assert evaluate(gt, aio, confidence=confidences).calibration.equals(
        evaluate(gt, aio, confidence=plain).calibration)
