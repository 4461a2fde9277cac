# Checks every row of src/<algorithm>/rows.h against the ISA registry, at build time.
#
#   awk -f tools/check-rows.awk build/<triple>/gen/archcrypt_isa.h src/*/rows.h
#
# The first file is the header the Makefile generated from isa.mk; from it, each slug's
# AC_ISA_FEATURES_<slug>. Then, for every row line (AC_ROW or AC_ROW_MIN_LEN) of the
# rows.h files: its slug must be in isa.mk, and its features must include each feature
# of its slug, or the row could be selected on a CPU (or under
# ARCHCRYPT_DISABLE_CPU_FEATURES) without an instruction its compiler flags allow. Rows of
# every architecture are checked on every build, so an amd64 build catches a ppc64le row.
# Exit 1 with one message per bad row.

function split_features(list, set,    n, parts, i) {
    for (i in set)
        delete set[i]
    n = split(list, parts, ",")
    for (i = 1; i <= n; i++)
        if (parts[i] != "")
            set[parts[i]] = 1
}

FNR == NR {
    if ($1 == "#define" && $2 ~ /^AC_ISA_FEATURES_/) {
        slug = substr($2, length("AC_ISA_FEATURES_") + 1)
        value = $3
        gsub(/"/, "", value)
        features[slug] = value
    }
    next
}

/^[ \t]*AC_ROW(_MIN_LEN)?[ \t]*\(/ {
    line = $0
    if (!match(line, /\([ \t]*[a-z0-9_]+[ \t]*,[ \t]*"[a-z0-9_,]*"/)) {
        printf "%s:%d: a row is one line: AC_ROW(<slug>, \"<features>\") or " \
               "AC_ROW_MIN_LEN(<slug>, \"<features>\", <min_len>)\n", FILENAME, FNR > "/dev/stderr"
        bad = 1
        next
    }
    row = substr(line, RSTART + 1, RLENGTH - 1)
    slug = row
    sub(/[ \t]*,.*/, "", slug)
    gsub(/[ \t]/, "", slug)
    requires = row
    sub(/^[^"]*"/, "", requires)
    sub(/".*/, "", requires)
    if (!(slug in features)) {
        printf "%s:%d: row %s: no ISA slug %s in isa.mk (ISA_ARCH_%s, ISA_FLAGS_%s, " \
               "ISA_FEATURES_%s)\n", FILENAME, FNR, slug, slug, slug, slug, slug > "/dev/stderr"
        bad = 1
        next
    }
    split_features(requires, have)
    split_features(features[slug], need)
    missing = ""
    for (f in need)
        if (!(f in have))
            missing = missing (missing == "" ? "" : ",") f
    if (missing != "") {
        printf "%s:%d: row %s requires \"%s\", but isa.mk builds slug %s with flags " \
               "that assume {%s} (ISA_FEATURES_%s): the row must require %s too\n",
               FILENAME, FNR, slug, requires, slug, features[slug], slug, missing > "/dev/stderr"
        bad = 1
    }
}

END {
    exit bad
}
