#!/usr/bin/env bash
# Fetch MathJax 3 from the npm registry and copy the subset the book needs into
# book/_mathjax_extra/_static/mathjax/ (git-ignored). _config.yml lists book/_mathjax_extra in
# html_extra_path, so the files land in _build/html/_static/mathjax/, where Sphinx looks for
# `mathjax_path: mathjax/tex-mml-chtml.js` (a relative mathjax_path is relative to _static/).
# The built pages thus load MathJax locally and never from a CDN.
#
# What a page with math loads: es5/tex-mml-chtml.js, then on demand the TeX and MathML
# extensions (input/*/extensions), the CHTML woff-v2 fonts, and, from the right-click menu,
# the accessibility components (a11y/, ui/, sre/mathmaps).
set -euo pipefail

VERSION=3.2.2
# sha1 of mathjax-3.2.2.tgz as published in the npm registry (dist.shasum)
SHASUM=c754d7b46a679d7f3fa03543d6b8bf124ddf9f6b
DEST="$(cd "$(dirname "$0")/.." && pwd)/book/_mathjax_extra/_static/mathjax"

command -v npm >/dev/null || { echo "fetch_mathjax.sh: npm is needed (apt-get install npm)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "mathjax@$VERSION" >/dev/null)
echo "$SHASUM  $tmp/mathjax-$VERSION.tgz" | sha1sum -c --quiet -
tar -xzf "$tmp/mathjax-$VERSION.tgz" -C "$tmp"

src="$tmp/package/es5"
rm -rf "$DEST"
mkdir -p "$DEST/input/tex" "$DEST/input/mml" "$DEST/output/chtml/fonts"
cp "$src/tex-mml-chtml.js" "$DEST/"
cp -r "$src/input/tex/extensions" "$DEST/input/tex/"
cp -r "$src/input/mml/extensions" "$DEST/input/mml/"
cp -r "$src/output/chtml/fonts/woff-v2" "$DEST/output/chtml/fonts/"
cp -r "$src/a11y" "$src/ui" "$src/sre" "$DEST/"
cp "$tmp/package/LICENSE" "$DEST/"
echo "MathJax $VERSION -> $DEST ($(du -sh "$DEST" | cut -f1))"
