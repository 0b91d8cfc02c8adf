#!/bin/sh
# Copyright (C) 2026 The tracer authors.
# SPDX-License-Identifier: GPL-2.0-or-later

test_description='tracer-report --html, opened in headless Chromium

A two-node step with a GPU each (Slurm gres on fake devices, NVML from
the test fixture library), PSI, memory, disk writes and network traffic
is reported with tracer-report -j JOB --html -o FILE.  Chromium renders
the file at a phone width and at a desktop width: a script the test adds
to a copy measures every chart and section in the rendered page (size on
screen, points drawn), and that nothing is wider than a phone screen.  A
screenshot of each width is kept as a test artifact.'

: "${SHARNESS_TEST_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
export SHARNESS_TEST_SRCDIR
. "${SHARNESS:-/usr/share/sharness/sharness.sh}"

B=${TRACER_BUILDDIR:-$(cd "$SHARNESS_TEST_DIRECTORY/.." && pwd)}
REPORT=$B/analysis/tracer-report
NVML=$B/libtracer/node/.libs/libnvidia-ml-fixture.so
ARTIFACTS=${TRACER_ARTIFACTS:-$B/tests/artifacts}

require_or_skip "must run as root" test_have_prereq ROOT
require_or_skip "slurmctld, slurmd and munged (tools/install-deps)" \
    test_have_prereq SLURM
require_or_skip "chromium (tools/install-deps)" command -v chromium
require_or_skip "the NVML fixture ($NVML, built by make check)" test -f "$NVML"

# chromium ARGS...: headless, without the sandbox (root), GPU or network
chrome ()
{
    timeout 120 chromium --headless --no-sandbox --disable-gpu \
        --no-first-run --disable-extensions --disable-background-networking \
        --hide-scrollbars --user-data-dir="$PWD/chrome-profile" "$@" \
        2>>chrome.err
}

test_expect_success 'start two nodes with a GPU each, PSI and NVML' '
    state=$(mktemp /tmp/tracer-nvml.XXXXXX) &&
    echo "$state" >nvml.path &&
    printf "driver 535.104.05\ndevice 0 uuid=GPU-1111 name=FakeGPU mem_total=85899345920 mem_used=4294967296 util=63\n" \
        >"$state" && chmod 0644 "$state" &&
    cluster_up --nodes 2 --gpus 1 --sampling psi_mirror=true \
        --sampling nvml_library="$NVML" --daemon-env TRACER_FAKE_NVML="$state"
'

test_expect_success 'a two-node GPU step that computes, writes and talks' '
    cat >work.sh <<-\EOF &&
	#!/bin/sh
	echo JOB=$SLURM_JOB_ID >&2
	perl -e "my \$x = q(a) x (80 * 1048576); my \$t = time + 4; 1 while time < \$t;"
	dd if=/dev/zero of=/tmp/tracer-html-$SLURM_JOB_ID-$SLURM_NODEID bs=1M count=64 conv=fsync 2>/dev/null
	rm -f /tmp/tracer-html-$SLURM_JOB_ID-$SLURM_NODEID
	head -c 30000000 /dev/zero | od -An -v | head -c 30000000
	sleep 2
	EOF
    chmod +x work.sh &&
    srun --tracer -N2 --ntasks-per-node=1 --gres=gpu:1 --mem=500M \
        ./work.sh >/dev/null 2>run.err &&
    job=$(sed -n "s/^JOB=//p" run.err | head -1) &&
    test -n "$job" && echo "$job" >job.id &&
    wait_for "wait_record $job && test \$(jq length rec.json) = 2" 60 &&
    jq -e "all(.[]; .series.metrics.gpu_util_pct != null)" rec.json &&
    jq -e "all(.[]; .series.metrics.psi_cpu_some != null)" rec.json
'

test_expect_success 'tracer-report --html -o FILE writes one self-contained file' '
    job=$(cat job.id) &&
    $REPORT -j "$job" --html -o report.html &&
    test -s report.html &&
    ! ls report.html.* 2>/dev/null &&
    ! grep -i -e "<script" -e "<link" -e " src=" -e "http://" -e "https://" \
        report.html &&
    grep "<section class=\"step\" id=\"step-0\"" report.html &&
    mkdir -p "$ARTIFACTS" && cp report.html "$ARTIFACTS/0612-report.html"
'

# The probe: appended to a copy, it writes what the browser laid out into
# <pre id="probe"> as JSON, which --dump-dom prints.
cat >probe.js <<\EOF
(function () {
  function box(e) { var r = e.getBoundingClientRect();
                    return { w: Math.round(r.width), h: Math.round(r.height) }; }
  var out = { sections: {}, charts: [], timeline: null, nodes: 0,
              scrollWidth: document.documentElement.scrollWidth,
              innerWidth: window.innerWidth };
  ["job", "summary", "diagnosis", "recommendations"].forEach(function (id) {
    var e = document.getElementById(id);
    out.sections[id] = e ? { text: e.textContent.trim().length,
                             box: box(e) } : null;
  });
  document.querySelectorAll("figure.chart").forEach(function (f) {
    var pts = 0;
    f.querySelectorAll("polyline").forEach(function (p) {
      pts += p.points.numberOfItems; });
    f.querySelectorAll("path").forEach(function (p) {
      pts += p.getTotalLength() > 0 ? 1 : 0; });
    pts += f.querySelectorAll("circle").length;
    var svg = f.querySelector("svg");
    out.charts.push({ metric: f.getAttribute("data-metric"),
                      empty: f.getAttribute("data-empty") === "true",
                      svg: svg ? box(svg) : null, points: pts,
                      caption: (f.querySelector("figcaption") || {}).textContent ? 1 : 0 });
  });
  var t = document.querySelector("figure.timeline");
  if (t) out.timeline = { box: box(t), bars: t.querySelectorAll("rect").length };
  document.querySelectorAll("table.nodes tr").forEach(function () { out.nodes++; });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
EOF

# phone.html WIDTH FILE: FILE in a WIDTH pixels wide frame.  Headless
# Chromium keeps windows at least 500 pixels wide; a frame has the
# viewport of a phone.  The probe's result is copied out of the frame.
phone_page ()
{
    cat <<-EOF
	<!DOCTYPE html><html><body style="margin:0">
	<iframe id="f" src="$2" style="width:$1px;height:3000px;border:0"></iframe>
	<script>
	document.getElementById("f").onload = function () {
	  var d = this.contentDocument, p = d && d.getElementById("probe");
	  var pre = document.createElement("pre");
	  pre.id = "probe";
	  pre.textContent = p ? p.textContent : "null";
	  document.body.appendChild(pre);
	};
	</script></body></html>
	EOF
}

# probe WIDTH: render at WIDTH, the probe's JSON in probe-WIDTH.json
probe ()
{
    { cat report.html; printf "<script>\n"; cat probe.js;
      printf "</script>\n"; } >probe.html &&
    page=probe.html &&
    if [ "$1" -lt 500 ]; then
        phone_page "$1" probe.html >phone-$1.html && page=phone-$1.html
    fi &&
    chrome --window-size="$(( $1 < 500 ? 500 : $1 )),900" \
        --allow-file-access-from-files --virtual-time-budget=5000 \
        --dump-dom "file://$PWD/$page" >dom-$1.html &&
    sed -n "s|.*<pre id=\"probe\">\(.*\)</pre>.*|\1|p" dom-$1.html |
        sed -e "s/&quot;/\"/g" -e "s/&amp;/\&/g" >probe-$1.json &&
    jq . probe-$1.json
}

test_expect_success 'desktop width: every section and chart is drawn, and not empty' '
    probe 1280 &&
    for s in job summary diagnosis recommendations; do
        jq -e ".sections[\"$s\"].text > 20 and .sections[\"$s\"].box.h > 10" \
            probe-1280.json || return 1
    done &&
    for m in cpu memory psi io net gpu; do
        jq -e "[.charts[] | select(.metric == \"$m\")] | length >= 1" \
            probe-1280.json &&
        jq -e "all(.charts[] | select(.metric == \"$m\");
                   .empty == false and .svg.w > 200 and .svg.h > 80
                   and .points >= 2)" probe-1280.json || return 1
    done &&
    jq -e ".timeline.box.h > 20 and .timeline.bars >= 1" probe-1280.json &&
    jq -e ".nodes >= 3" probe-1280.json
'

test_expect_success 'phone width (360 px): nothing is wider than the screen' '
    probe 360 &&
    jq -e ".innerWidth == 360 and .scrollWidth <= .innerWidth" probe-360.json &&
    jq -e "all(.charts[]; .empty or (.svg.w > 100 and .svg.w <= 360))" \
        probe-360.json &&
    jq -e "all(.sections[]; .box.w <= 360)" probe-360.json
'

test_expect_success 'screenshots at both widths are kept as artifacts' '
    chrome --window-size=1280,4000 --screenshot="$PWD/desktop.png" \
        "file://$PWD/report.html" &&
    phone_page 360 report.html >phone-shot.html &&
    chrome --window-size=500,3000 --allow-file-access-from-files \
        --screenshot="$PWD/phone.png" "file://$PWD/phone-shot.html" &&
    for p in desktop phone; do
        test "$(head -c 8 $p.png | od -An -tx1 | tr -d " \n")" = \
            89504e470d0a1a0a &&
        test $(wc -c <$p.png) -gt 20000 &&
        cp $p.png "$ARTIFACTS/0612-report-$p.png" || return 1
    done
'

test_expect_success 'remove the NVML state' '
    rm -f "$(cat nvml.path)"
'

test_done
