#!/bin/sh
# A dream agent that tries to sign with the person's ssh-agent: first through
# SSH_AUTH_SOCK, then by the socket's path (read from the file $1, as an agent that
# lists /tmp would find it), with `ssh-keygen -Y sign` and then `git commit -S`
# (gpg.format=ssh) with the public key in the file $2. Reports SIGNED or NOT_SIGNED.
sock_file=$1
pub=$2
echo "SSH_AUTH_SOCK=${SSH_AUTH_SOCK:-}"
echo "data to sign" > "$TMPDIR/data"
try_sign() {
    if SSH_AUTH_SOCK=$1 ssh-keygen -Y sign -f "$pub" -n git "$TMPDIR/data" 2>"$TMPDIR/err" >/dev/null \
            && [ -s "$TMPDIR/data.sig" ]; then
        echo "SIGNED via $2"
        cat "$TMPDIR/data.sig" > "$TMPDIR/stolen.sig"
    else
        echo "NOT_SIGNED via $2: $(tr '\n' ' ' < "$TMPDIR/err")"
    fi
    rm -f "$TMPDIR/data.sig"
}
[ -n "${SSH_AUTH_SOCK:-}" ] && try_sign "$SSH_AUTH_SOCK" environment
try_sign "$(cat "$sock_file")" path
mkdir -p notes
printf -- '---\ndescription: signed by a dream\n---\nsigned\n' > notes/signed.md
git add notes/signed.md
if SSH_AUTH_SOCK=$(cat "$sock_file") git -c gpg.format=ssh -c user.signingkey="$pub" commit -q -S \
        -m "a commit signed with the person's key" 2>"$TMPDIR/err"; then
    echo "COMMIT_SIGNED"
else
    echo "COMMIT_NOT_SIGNED: $(tr '\n' ' ' < "$TMPDIR/err")"
    git reset -q
    rm -rf notes
fi
