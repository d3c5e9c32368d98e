"""Every relative link in README.md and docs/*.md names a file that exists,
and, with a #fragment into a Markdown file, one of that file's headings
(GitHub's anchors: lower case, punctuation dropped, spaces as hyphens,
repeats numbered). Prints each broken link; exits 1 if there is one.
  python3 check_links.py SOURCE-ROOT"""
import glob, os, re, sys

root = sys.argv[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def headings(path):
    """The anchors of a Markdown file's headings (outside code blocks)."""
    anchors, seen, fenced = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


cache, broken = {}, []
sources = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
for source in sources:
    text = open(source, encoding="utf-8").read()
    # Links inside code blocks are examples, not links.
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.M | re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(source), path)) if path else source
        where = os.path.relpath(source, root)
        if not os.path.exists(full):
            broken.append(f"{where}: {target}: no such file")
        elif fragment and full.endswith(".md"):
            if full not in cache:
                cache[full] = headings(full)
            if fragment not in cache[full]:
                broken.append(f"{where}: {target}: no such heading")
for line in broken:
    print(line)
print(f"{len(sources)} files, {len(broken)} broken links")
sys.exit(1 if broken else 0)
