// The book's search ranking (Sphinx's html_search_scorer: this file is read before
// searchtools.js, whose default Scorer it replaces). With Sphinx's defaults an API entry outranks
// a chapter: "truthful" put *Truthful calibration measures* sixth, behind functions whose name
// contains the word, and "erratum" put the claims module's API page first and *Errata* eighth. A
// reader types a topic: pages whose title names it come first, then sections whose heading names
// it, then the text, and API entries after the chapters.
var Scorer = {
  score: (result) => {
    const [docname, title, anchor, , score] = result;
    const query = new URLSearchParams(window.location.search).get("q") || "";
    // a word's stem, loosely: "erratum" finds "Errata", "truthful" finds "Truthful"
    const stems = query.toLowerCase().split(/\s+/).filter((w) => w.length > 2)
      .map((w) => w.slice(0, Math.max(4, w.length - 2)));
    const names = (text) => stems.length > 0 && stems.every((s) => text.toLowerCase().includes(s));
    const [page, section] = title.split(" > ");
    if (docname.startsWith("book/appendix/api")) return score - 30;  // below every chapter
    if (names(page)) return score + (section === undefined && !anchor ? 40 : 20);
    if (section !== undefined && names(section)) return score + 10;
    return score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
