#!/usr/bin/env bash
# Public real logs from outside the corpus (issue 20: ratios are checked on
# logs the project does not have; these stand in for the kinds the issue
# names: web access logs, Kafka controller/state-change/GC/server logs, nginx
# JSON status logs, Windows CBS logs). Extracted from three public
# repositories' git histories, never committed here:
#   logpai/loghub                 Windows/Windows_2k.log (CBS)
#   elastic/examples              Common Data Formats/apache_logs/apache_logs,
#                                 Common Data Formats/nginx_json_plus_logs/nginxplus_json_logs
#   AndreasTraut/kafka_2.13-2.8.0 logs/server.log*, controller.log*,
#                                 state-change.log*, kafkaServer-gc.log*
#                                 (each kind's rotated files concatenated in
#                                 name order)
# Measured at their commits dd61d09, 6d86454, 83ddc20 (bench/LOGS.md
# "Format 9"). Each file becomes one column (one line per row), then the log
# codec's probe (`logs_ratio`: payload A, the `fastpair` file, Parquet-ZSTD,
# zstd -3/-19) runs on them.
#   bash bench/public-logs.sh LOGHUB_GIT ELASTIC_GIT KAFKA_GIT [DIR]
# Each *_GIT is a clone of that repository (a git directory or work tree;
# e.g. `git clone https://github.com/logpai/loghub`); DIR defaults to
# target/public-logs.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
  sed -n '2,22p' "$0" >&2
  exit 2
fi
loghub=$1 elastic=$2 kafka=$3 dir=${4:-target/public-logs}
mkdir -p "$dir"
show() { git -C "$1" show "HEAD:$2"; }
show "$loghub" Windows/Windows_2k.log > "$dir/ext_windows_cbs.txt"
show "$elastic" "Common Data Formats/apache_logs/apache_logs" > "$dir/ext_apache_access.txt"
show "$elastic" "Common Data Formats/nginx_json_plus_logs/nginxplus_json_logs" > "$dir/ext_nginxplus_json.txt"
for kind in server controller state-change; do
  git -C "$kafka" ls-tree -r --name-only HEAD logs/ | grep "^logs/$kind\.log" | sort \
    | while read -r p; do show "$kafka" "$p"; done > "$dir/ext_kafka_$kind.txt"
done
git -C "$kafka" ls-tree -r --name-only HEAD logs/ | grep '^logs/kafkaServer-gc\.log' | sort \
  | while read -r p; do show "$kafka" "$p"; done > "$dir/ext_kafka_gc.txt"
wc -l -c "$dir"/*.txt
cargo build --release -p fastpair-lab --example logs_ratio -q
FASTPAIR_CORPUS="$dir" target/release/examples/logs_ratio ext
