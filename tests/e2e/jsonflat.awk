# Flatten JSON into one "path value" line per scalar, e.g.
#   jobs.0.read.iops 1234.5
#   jobs.0.jobname "randread-4k"
# Strings keep their quotes (escapes left as they are); arrays are indexed
# from 0.  Exit status 1 if the input is not one well-formed JSON value.
# Plain POSIX awk (mawk on Debian): no jq or python needed.
#   awk -f jsonflat.awk fio.json | awk '$1 == "jobs.0.read.iops" { print $2 }'

function ws() {
	while (pos <= len && index(" \t\r\n", substr(txt, pos, 1)))
		pos++
}

function fail(msg) {
	if (!bad)
		printf "jsonflat: %s at offset %d\n", msg, pos > "/dev/stderr"
	bad = 1
	pos = len + 1
}

function str(   start, c) {
	start = pos
	pos++
	while (pos <= len) {
		c = substr(txt, pos, 1)
		if (c == "\\") { pos += 2; continue }
		pos++
		if (c == "\"") return substr(txt, start, pos - start)
	}
	fail("unterminated string")
	return ""
}

function join(path, key) {
	return path == "" ? key : path "." key
}

function value(path,   c, k, n, start) {
	ws()
	c = substr(txt, pos, 1)
	if (c == "{") {
		pos++; ws()
		if (substr(txt, pos, 1) == "}") { pos++; return }
		while (!bad) {
			ws()
			if (substr(txt, pos, 1) != "\"") { fail("expected a key"); return }
			k = str(); k = substr(k, 2, length(k) - 2)
			ws()
			if (substr(txt, pos, 1) != ":") { fail("expected :"); return }
			pos++
			value(join(path, k))
			ws()
			c = substr(txt, pos, 1); pos++
			if (c == "}") return
			if (c != ",") { fail("expected , or }"); return }
		}
	} else if (c == "[") {
		pos++; ws(); n = 0
		if (substr(txt, pos, 1) == "]") { pos++; return }
		while (!bad) {
			value(join(path, n++))
			ws()
			c = substr(txt, pos, 1); pos++
			if (c == "]") return
			if (c != ",") { fail("expected , or ]"); return }
		}
	} else if (c == "\"") {
		print path, str()
	} else {
		start = pos
		while (pos <= len && !index(" \t\r\n,}]", substr(txt, pos, 1)))
			pos++
		if (pos == start) { fail("expected a value"); return }
		print path, substr(txt, start, pos - start)
	}
}

{ txt = txt $0 "\n" }

END {
	len = length(txt); pos = 1; bad = 0
	value("")
	ws()
	if (!bad && pos <= len) fail("trailing text")
	exit bad
}
