# fio-trim.awk: fio's pretty-printed JSON, less what the report (report.py)
# does not read (run by busybox awk in the guest, before the JSON crosses
# the emulated UART).  Drops the members named below, whole objects
# included, and keeps only the 50th and 99th percentiles.  It keys on
# fio's layout: one member per line, a closing brace at the indentation of
# its opening line.  A line is held back until the next one is known, so
# that the comma before a closing brace (left where a last member was
# dropped) goes: the output is valid JSON.
function ind(s) { match(s, /^ */); return RLENGTH }
function out(s) {
	if (held && s ~ /^ *[]}]/) sub(/, *$/, "", prev)
	if (held) print prev
	prev = s; held = 1
}
BEGIN {
	n = split("global@options job@options disk_util slat_ns lat_ns sync iodepth_level iodepth_submit iodepth_complete latency_ns latency_us latency_ms bw_bytes io_kbytes runtime short_ios drop_ios bw_min bw_max bw_agg bw_mean bw_dev bw_samples iops_min iops_max iops_mean iops_stddev iops_samples groupid eta ctx majf minf latency_depth latency_target latency_percentile latency_window", d, " ")
	for (i = 1; i <= n; i++) { k = d[i]; gsub(/@/, " ", k); drop[k] = 1 }
}
skip { if (ind($0) == skipind && $0 ~ /^ *[]}]/) skip = 0; next }
pct && ind($0) <= pctind { pct = 0 }
/^ *"[^"]*" : / {
	k = $0; sub(/^ *"/, "", k); sub(/".*/, "", k)
	if (k in drop) { if ($0 ~ /[[{]$/) { skip = 1; skipind = ind($0) }; next }
	if (pct && k != "50.000000" && k != "99.000000") next
	if (k == "percentile") { pct = 1; pctind = ind($0) }
}
{ out($0) }
END { if (held) print prev }
