"""``score_batch`` on view-typed columns keeps the output as compact as its rows (each row
repeated per metric, not the column's whole data per row), and a ``pa.RecordBatch`` comes back
as a ``pa.RecordBatch`` whatever the number of metrics, view columns included."""

from __future__ import annotations

import pyarrow as pa

from tracebridge.ray_data import score_batch

RECORD = ('{"messages": [{"type": "human", "content": "a question longer than twelve bytes"}, '
          '{"type": "ai", "content": "an answer longer than twelve bytes too"}]}')
METRICS = ["tool_call_f1", "tool_call_accuracy"]


def _ipc_size(table: pa.Table) -> int:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return len(sink.getvalue())


def test_a_view_column_is_repeated_as_compactly_as_a_plain_one() -> None:
    rows = 400
    view = pa.table({"record": pa.array([RECORD] * rows, pa.string_view()),
                     "tags": pa.array([["a tag longer than twelve"]] * rows,
                                      pa.list_(pa.string_view()))})
    plain = view.cast(pa.schema([("record", pa.string()), ("tags", pa.list_(pa.string()))]))
    scored_view, scored_plain = score_batch(view, metrics=METRICS), score_batch(plain,
                                                                                metrics=METRICS)
    assert scored_view.schema.field("record").type == pa.string_view()
    assert scored_view.schema.field("tags").type == pa.list_(pa.string_view())
    assert scored_view.column("record").to_pylist() == [RECORD] * (2 * rows)
    assert scored_view.drop_columns(["record", "tags", "scored_at"]).equals(
        scored_plain.drop_columns(["record", "tags", "scored_at"]))
    assert _ipc_size(scored_view) < 2 * _ipc_size(scored_plain)


def test_a_record_batch_comes_back_as_a_record_batch() -> None:
    for kind in (pa.string(), pa.string_view()):
        batch = pa.record_batch({"record": pa.array([RECORD, RECORD], kind)})
        for metrics in (METRICS[:1], METRICS):
            scored = score_batch(batch, metrics=metrics)
            assert (type(scored), scored.num_rows) == (pa.RecordBatch, 2 * len(metrics))
            assert scored.schema.field("record").type == kind


def test_a_view_type_inside_a_fixed_size_list_or_a_map_is_repeated_compactly() -> None:
    rows, text = 300, "a value longer than twelve bytes"
    for view, plain, value in (
        (pa.list_(pa.string_view(), 1), pa.list_(pa.string(), 1), [text]),
        (pa.map_(pa.string(), pa.string_view()), pa.map_(pa.string(), pa.string()),
         [("k", text)]),
    ):
        table = pa.table({"record": pa.array([RECORD] * rows), "extra": pa.array(
            [value] * rows, view)})
        scored = score_batch(table, metrics=METRICS)
        as_plain = score_batch(table.cast(pa.schema([("record", pa.string()),
                                                      ("extra", plain)])), metrics=METRICS)
        assert scored.schema.field("extra").type == view
        assert scored.column("extra").to_pylist() == as_plain.column("extra").to_pylist()
        assert _ipc_size(scored) < 2 * _ipc_size(as_plain)
