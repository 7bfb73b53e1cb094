#!/usr/bin/env bash
# Reader at scale (issue 8): cold point reads on a ~4 GB file, peak RSS of
# `fastpair get`, and warm bulk/random-read speed against an older commit,
# both builds in one run. Results: bench/READER.md. Needs /usr/bin/time
# (Debian package `time`) and the corpus in target/corpus
# (`bash ../shared/tools/corpus-unpack target/corpus`). Deletes its 4 GB file.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${OLD:-6c48448}
DIR=target/bench-reader
mkdir -p "$DIR"
cargo build --release --features cli --bin fastpair
cargo build --release -p fastpair-lab --example reader_compare
cargo build --release -p fastpair-lab --features object_store --example reader_bench
if [ ! -x "$DIR/old/target/release/fastpair" ]; then
  rm -rf "$DIR/old" && mkdir -p "$DIR/old"
  git archive "$OLD" | tar -x -C "$DIR/old"
  mkdir -p "$DIR/old/examples" && cp lab/examples/reader_compare.rs "$DIR/old/examples/"
  (cd "$DIR/old" && cargo build --release --no-default-features --bin fastpair --example reader_compare)
fi
NEW_BIN=./target/release
OLD_BIN=$DIR/old/target/release
BENCH=$NEW_BIN/examples/reader_bench
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(uname -r); $(date -u +%FT%TZ)"

F=$DIR/col4g.fpc
$BENCH make "$F" target/corpus/*.txt 4
ROW=112539676
echo "== cold open + first get, in-process (page cache dropped with posix_fadvise(DONTNEED) before each)"
$BENCH cold "$F" mmap 5
$BENCH cold "$F" pread 5
echo "== fastpair get FILE $ROW, cold: wall time, peak RSS, file-system inputs (512 B blocks)"
for b in new old; do
  bin=$NEW_BIN/fastpair; [ $b = old ] && bin=$OLD_BIN/fastpair
  for k in 1 2 3; do
    $BENCH drop "$F"
    /usr/bin/time -f "$b: %e s wall, %M KB max RSS, %I blocks read" "$bin" get "$F" $ROW > /dev/null
  done
done
echo "== the same file over HTTP: nginx on 127.0.0.1 (Debian package nginx-light), object_store feature"
NG=$(readlink -f "$DIR")/nginx
if [ -x /usr/sbin/nginx ]; then
  mkdir -p "$NG/tmp" "$NG/www" && ln -sf "$(readlink -f "$F")" "$NG/www/col4g.fpc"
  cat > "$NG/nginx.conf" <<CONF
daemon off; master_process off; worker_processes 1;
error_log $NG/error.log; pid $NG/nginx.pid;
events { worker_connections 64; }
http {
  log_format ranges '\$request_method \$uri \$http_range \$status \$body_bytes_sent';
  access_log $NG/access.log ranges;
  client_body_temp_path $NG/tmp; proxy_temp_path $NG/tmp; fastcgi_temp_path $NG/tmp;
  uwsgi_temp_path $NG/tmp; scgi_temp_path $NG/tmp;
  server { listen 127.0.0.1:18088; root $NG/www; }
}
CONF
  : > "$NG/access.log"
  /usr/sbin/nginx -p "$NG" -c "$NG/nginx.conf" & NGPID=$!
  sleep 1
  $BENCH remote http://127.0.0.1:18088/col4g.fpc $ROW $((ROW + 1000)) 26388590
  echo "nginx access log (one line per request):"; cat "$NG/access.log"
  kill $NGPID; wait $NGPID 2>/dev/null || true
else
  echo "NOTICE: /usr/sbin/nginx missing (apt-get install nginx-light); remote run skipped"
fi
rm -f "$F"

F2=$DIR/col05g.fpc
$BENCH make "$F2" target/corpus/*.txt 0.5
echo "== warm: read_all GB/s, read_values_into GB/s, random get ns/row (200k rows; best of passes)"
for k in 1 2 3; do
  for b in old new; do
    bin=$NEW_BIN/examples/reader_compare; [ $b = old ] && bin=$OLD_BIN/examples/reader_compare
    printf "%s\t" $b; "$bin" "$F2"
  done
done
rm -f "$F2"
