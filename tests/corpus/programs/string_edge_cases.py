import kilnflow as tf
w = tf.constant(["Hello World", "  a,b ", "", "ÄÖü"])
exprs = [
 lambda: tf.strings.split(w, sep=","),
 lambda: tf.strings.split(w, sep=",", maxsplit=0),
 lambda: tf.strings.substr(w, 1, 2),
 lambda: tf.strings.substr(w, [0, 1, 0, 2], [1, 1, 1, 2], unit="UTF8_CHAR"),
 lambda: tf.strings.length(w, unit="UTF8_CHAR"),
 lambda: tf.strings.regex_replace(w, r"\s+", "_"),
 lambda: tf.strings.regex_full_match(w, r".*o.*"),
 lambda: tf.strings.reduce_join(w, separator="|"),
 lambda: tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0, keepdims=True),
 lambda: tf.strings.join([w, w], separator="/"),
 lambda: tf.strings.as_string(tf.constant([1e10, 1e-3, 0.5])),
 lambda: tf.strings.as_string(tf.constant([1.5, 2.25]), shortest=True),
 lambda: tf.strings.as_string(tf.constant([1.5, 2.25]), scientific=True),
 lambda: tf.strings.as_string(tf.constant([7, 8]), fill="0", width=4),
 lambda: tf.strings.as_string(tf.constant([1+2j])),
 lambda: tf.strings.to_number(tf.constant(["1e3", " 4", "0x10"]), out_type=tf.float64),
 lambda: tf.strings.to_number(tf.constant(["1.5"]), out_type=tf.int32),
 lambda: tf.strings.format("{} and {}", (tf.constant("s"), tf.constant([["x"]]))),
 lambda: tf.strings.format("{}", tf.constant(3.5)),
 lambda: tf.strings.format("{}", tf.constant([1.5, 2.0, 3.25])),
 lambda: tf.strings.format("{}", tf.range(3.0) / 3),
 lambda: tf.strings.format("[{}]", tf.constant(True), placeholder="{}"),
 lambda: tf.strings.unicode_decode(w, "UTF-8").to_list(),
 lambda: tf.strings.unicode_split(w, "UTF-8"),
 lambda: tf.strings.bytes_split(w),
 lambda: tf.strings.strip(w),
 lambda: tf.strings.upper(w, encoding="utf-8"),
 lambda: tf.strings.lower(w, encoding="utf-8"),
 lambda: tf.strings.unicode_encode(tf.ragged.constant([[72, 105], [], [252]]), "UTF-8"),
 lambda: tf.strings.regex_replace(w, "(l+)", r"<\1>"),
 lambda: tf.strings.regex_full_match(w, ""),
 lambda: tf.strings.substr(tf.constant("abc"), 5, 1),
 lambda: tf.strings.length(tf.constant([["ab"], ["c"]])),
 lambda: tf.constant(["b", "a"]) < tf.constant(["a", "b"]),
 lambda: tf.math.equal(w, "ÄÖü"),
 lambda: tf.strings.join(["x", tf.strings.as_string(3)]),
 lambda: tf.strings.reduce_join(tf.constant([], dtype=tf.string)),
 lambda: tf.strings.split(tf.constant("a  b")),
 lambda: tf.strings.split(tf.constant("a  b"), sep=" "),
 lambda: tf.strings.split(tf.constant(["a b", ""])),
]
for i, e in enumerate(exprs):
    try:
        print(i, e())
    except Exception as ex:
        print(i, "ERR", type(ex).__name__)
