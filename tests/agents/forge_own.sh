#!/bin/sh
# A dream agent that commits a note, then replaces the note's blob in its own object
# folder with other content under the same name: a forged object the import must refuse.
git memory create notes/forged.md "The real text." -d "A note whose object gets forged" -m "Add a note"
oid=$(git rev-parse HEAD:notes/forged.md)
python3 - "$(git rev-parse --path-format=absolute --git-path objects)/$(echo "$oid" | cut -c1-2)/$(echo "$oid" | cut -c3-)" <<'PY'
import os, sys, zlib
path = sys.argv[1]
data = b"---\ndescription: forged\n---\nForged text.\n"
os.unlink(path)  # read-only, but its folder is writable
with open(path, "wb") as fh:
    fh.write(zlib.compress(b"blob %d\0" % len(data) + data))
PY
echo "FORGED $oid"
