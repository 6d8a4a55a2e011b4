"""kf.version (tf.version): kilnflow's own version, and the names TF programs read."""
import sys

VERSION = "0.2.0"
GIT_VERSION = "unknown"  # not recorded at build time
COMPILER_VERSION = f"CPython {sys.version.split()[0]}"  # kilnflow compiles nothing ahead
GRAPH_DEF_VERSION = 1  # kilnflow's serialized graph format (saving/graph_json.py)
GRAPH_DEF_VERSION_MIN_CONSUMER = 0  # the oldest kilnflow graph format a reader accepts
GRAPH_DEF_VERSION_MIN_PRODUCER = 0  # the oldest producer whose graphs this version reads
