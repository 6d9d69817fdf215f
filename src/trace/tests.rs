//! Tests of the trace reader: the format, streaming, and every located problem.

use std::sync::Arc;

use super::*;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write the trace");
    path
}

fn records(
    path: &Path,
    flit_bytes: Option<u32>,
    nodes: Option<u32>,
) -> Vec<Result<TraceRecord, String>> {
    open(path, flit_bytes, nodes).expect("open").map(|r| r.map_err(|e| e.0)).collect()
}

fn rec(cycle: u64, source: u32, destination: u32, length: u32) -> TraceRecord {
    TraceRecord { cycle, source, destination, length }
}

#[test]
fn csv_with_and_without_header_comments_and_byte_lengths() {
    let dir = tempfile::tempdir().expect("temp dir");
    let header = write(
        &dir,
        "a.csv",
        "# a comment\n\ncycle, source, destination, length\n0,1,2,3\n0,2,1,1\n\n5,3,0,16\n",
    );
    let want = vec![Ok(rec(0, 1, 2, 3)), Ok(rec(0, 2, 1, 1)), Ok(rec(5, 3, 0, 16))];
    assert_eq!(records(&header, None, Some(4)), want);
    let bare = write(&dir, "b.csv", "0,1,2,3\r\n0,2,1,1\r\n5,3,0,16");
    assert_eq!(records(&bare, None, Some(4)), want);
    let bytes = write(&dir, "c.csv", "cycle,source,destination,length_bytes\n0,1,2,64\n1,2,1,65\n");
    assert_eq!(records(&bytes, Some(32), None), vec![Ok(rec(0, 1, 2, 2)), Ok(rec(1, 2, 1, 3))]);
    let scanned = scan(&header, None, None);
    assert!(scanned.problems.is_empty(), "{:?}", scanned.problems);
    let summary = TraceSummary { messages: 3, flits: 20, last_cycle: 5, max_node: 3 };
    assert_eq!(scanned.summary, summary);
    assert_eq!(scanned.max_node_at, (7, 2), "node 3 first named at line 7, as a source");
}

#[test]
fn every_bad_row_is_located_by_file_row_and_column() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write(
        &dir,
        "bad.csv",
        "cycle,source,destination,length\n\
         0,0,1,4\n\
         0,0,9,4\n\
         1,0,1,0\n\
         2,0,1,-3\n\
         3,0,1,2.5\n\
         4,x,1,2\n\
         1,0,1,2\n\
         5,0,1\n\
         6,0,1,2,7\n\
         7,0,1,4\n",
    );
    let got = records(&path, None, Some(4));
    let shown = path.display().to_string();
    let errors: Vec<&String> = got.iter().filter_map(|r| r.as_ref().err()).collect();
    let expected = [
        "row 3, column 3 (`destination`): node 9 does not exist: the network has nodes 0 to 3",
        "row 4, column 4 (`length`): a message has at least 1 flit; found length 0",
        "row 5, column 4 (`length`): -3 is negative",
        "row 6, column 4 (`length`): 2.5 is not a whole number",
        "row 7, column 2 (`source`): \"x\" is not a number",
        "row 8, column 1 (`cycle`): cycle 1 is earlier than the previous row's 4",
        "row 9, column 4 (`length`): malformed row: 3 comma-separated values",
        "row 10, column 5 (`beyond the last`): malformed row: 5 comma-separated values",
    ];
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
    for (error, want) in errors.iter().zip(expected) {
        assert!(error.starts_with(&format!("trace {shown}, {want}")), "{error}\nwanted {want}");
    }
    assert_eq!(got.iter().filter(|r| r.is_ok()).count(), 2);
    // The scan reports them all (without the node count, the node is no problem there).
    let scanned = scan(&path, None, None);
    assert_eq!(scanned.problems.len(), expected.len() - 1, "{:?}", scanned.problems);
    assert_eq!(scanned.summary.max_node, 9);
    assert_eq!(scanned.max_node_at, (3, 3));
}

#[test]
fn headers_and_units_are_checked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        (
            "cycle,source,destination,length_kb\n0,0,1,1\n",
            None,
            "row 1, column 4 (`length`): unknown length unit",
        ),
        (
            "cycle,source,destination,length_bytes\n0,0,1,1\n",
            None,
            "give `traffic.trace_flit_bytes`",
        ),
        (
            "cycle,source,destination,length\n0,0,1,1\n",
            Some(8),
            "`trace_flit_bytes` does not apply",
        ),
        (
            "time,source,destination,length\n0,0,1,1\n",
            None,
            "row 1, column 1 (`cycle`): unknown column `time`",
        ),
        ("cycle,source,destination\n0,0,1\n", None, "lacks the length column"),
        ("# only a comment\n", None, "holds no messages"),
    ];
    for (text, flit_bytes, want) in cases {
        let path = write(&dir, "h.csv", text);
        let error = match open(&path, flit_bytes, None) {
            Ok(mut reader) => match reader.next() {
                Some(Err(e)) => e.0,
                other => panic!("{text:?}: {other:?}"),
            },
            Err(e) => e.0,
        };
        let error = if error.contains(want) { error } else { panic!("{text:?}: {error}") };
        assert!(error.starts_with("trace "), "{error}");
    }
    let path = write(&dir, "t.txt", "0,0,1,1\n");
    assert!(
        open(&path, None, None).err().expect("unknown format").0.contains("unknown trace format")
    );
    let missing = dir.path().join("missing.csv");
    assert!(open(&missing, None, None).err().expect("missing").0.contains("does not exist"));
    let long = write(&dir, "long.csv", &format!("0,0,1,{}\n", "1".repeat(5000)));
    assert!(scan(&long, None, None).problems[0].0.contains("longer than 4096 bytes"));
}

#[test]
fn special_files_are_refused() {
    assert!(open(Path::new("/dev/zero.csv"), None, None).is_err());
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("d.csv");
    std::fs::create_dir(&folder).expect("mkdir");
    assert!(open(&folder, None, None).err().expect("a directory").0.contains("directory"));
}

/// A Parquet trace with the given length column, in row groups of 3 rows (so the reader
/// crosses row groups and batches).
fn parquet_trace(dir: &tempfile::TempDir, length: Arc<dyn Array>, name: &str) -> PathBuf {
    use arrow_array::{ArrayRef, UInt32Array, UInt64Array};
    use arrow_schema::{Field, Schema};
    let n = length.len();
    let cycle: ArrayRef = Arc::new(UInt64Array::from_iter_values((0..n as u64).map(|i| i / 2)));
    let source: ArrayRef = Arc::new(UInt32Array::from_iter_values((0..n as u32).map(|i| i % 4)));
    let destination: ArrayRef =
        Arc::new(UInt32Array::from_iter_values((0..n as u32).map(|i| (i + 1) % 4)));
    let schema = Arc::new(Schema::new(vec![
        Field::new("cycle", DataType::UInt64, false),
        Field::new("source", DataType::UInt32, false),
        Field::new("destination", DataType::UInt32, false),
        Field::new(name, length.data_type().clone(), true),
    ]));
    let batch = RecordBatch::try_new(schema.clone(), vec![cycle, source, destination, length])
        .expect("batch");
    let path = dir.path().join("t.parquet");
    let file = File::create(&path).expect("create");
    let properties = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(3))
        .build();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(file, schema, Some(properties)).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    path
}

#[test]
fn parquet_traces_stream_across_row_groups_and_locate_their_problems() {
    use arrow_array::{Float64Array, Int64Array};
    let dir = tempfile::tempdir().expect("temp dir");
    let good = parquet_trace(&dir, Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5, 6, 7])), "length");
    let got: Vec<TraceRecord> =
        open(&good, None, Some(4)).expect("open").map(|r| r.expect("a record")).collect();
    assert_eq!(got.len(), 7);
    assert_eq!(got[6], rec(3, 2, 3, 7));
    assert_eq!(scan(&good, None, None).summary.flits, 28);
    let lengths = Float64Array::from(vec![Some(1.0), Some(2.5), None, Some(0.0)]);
    let bad = parquet_trace(&dir, Arc::new(lengths), "length_flits");
    let errors: Vec<String> = scan(&bad, None, None).problems.into_iter().map(|e| e.0).collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].contains("row 2, column 4 (`length`): 2.5 is not a whole number"),
        "{errors:?}"
    );
    assert!(errors[1].contains("row 3, column 4 (`length`): the cell is empty"), "{errors:?}");
    assert!(errors[2].contains("row 4, column 4 (`length`): a message has at least 1 flit"));
    let unit = parquet_trace(&dir, Arc::new(Int64Array::from(vec![1])), "size");
    assert!(
        scan(&unit, None, None).problems[0]
            .0
            .contains("unknown length unit: the fourth column is `size`")
    );
}
