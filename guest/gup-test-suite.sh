#!/bin/sh
# usage: gup-test-suite.sh GUP_TEST_BINARY
# The gup_test cases of tools/testing/selftests/mm/run_vmtests.sh on
# anonymous memory, and the same on MAP_SHARED files on the scratch ext4,
# xfs and tmpfs mounts. One KTAP line per invocation; each run's own
# output becomes diagnostics.
set -u
bin=${1:?usage: gup-test-suite.sh GUP_TEST_BINARY}
cases=/tmp/gup_cases
: > $cases
for c in "-u" "-U" "-a" "-b" "-L" "-ct -F 0x1 0 19 0x1000"; do
	echo "anon $c" >> $cases
done
for fs in ext4 xfs tmpfs; do
	for c in "-u -S" "-U -S" "-a -S" "-b -S" "-a -W -S" "-L -W -S" \
		"-ct -S -F 0x1 0 19 0x1000"; do
		echo "$fs $c" >> $cases
	done
done

echo "TAP version 13"
echo "1..$(wc -l < $cases)"
n=0
while read -r kind args; do
	n=$((n + 1))
	file=
	if [ "$kind" != anon ]; then
		file=/mnt/$kind/gup_test.file
		rm -f "$file"
		truncate -s 32M "$file"
	fi
	# shellcheck disable=SC2086 # $args is a list of options
	$bin -m 32 ${file:+-f "$file"} $args > /tmp/gup.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/gup.out
	name="gup_test_${kind}$(echo " $args" | tr -s " " "_" | tr -d "-")"
	case $rc in
	0) echo "ok $n $name" ;;
	4) echo "ok $n $name # SKIP" ;;
	*) echo "not ok $n $name # exit status $rc" ;;
	esac
done < $cases
