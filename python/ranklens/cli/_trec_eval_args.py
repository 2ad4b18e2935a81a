"""``ranklens trec_eval``'s arguments: trec_eval 10.0's options read as its
``getopt_long`` reads them (clustered short flags, ``-mP.5,10``, ``--long=value``),
the measures they mark and their parameters, and C's ``atol``/``atof`` number
prefixes.  The driver (:mod:`ranklens.cli._trec_eval`) scores and prints.

Why a module of its own: the argument grammar is trec_eval's, independent of how
the numbers are computed; the driver reads :func:`parse_args`'s result only.
"""

from __future__ import annotations

import math
import re

from ranklens.cli._trec_eval_measures import (
    BY_NAME,
    MEASURES,
    NICKNAMES,
    Meas,
    Opts,
    UsageError,
)
from ranklens.errors import RanklensInputError

USAGE = (
    "Usage: ranklens trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n"
    "   -h: Give full help information, including other options\n"
    "   -q: In addition to summary evaluation, give evaluation for each query\n"
    "   -m: calculate and print measures indicated by 'measure'\n"
    "       ('-m all_trec' prints all qrels measures, '-m official' is default)\n"
)

HELP = (
    USAGE
    + """
trec_eval 10.0's command line; numbers computed by ranklens.

  -q            also print each query's values
  -m measure[.params]
                add a measure (or a nickname: official, all_trec, set,
                all_prefs, prefs, qrels_jg); params
                as in trec_eval: P.5,10  iprec_at_recall..1,.5  ndcg.1=3,2=9
  -c            average over all qrels topics (a topic missing from the run is
                scored on trec_eval's one-document bogus ranking)
  -n            no summary (``all``) rows
  -l N          relevance level (default 1)
  -M N          use only the top N documents of each ranking
  -N N          number of documents in the collection (utility)
  -J            judged documents only
  -Z file       print z-scores (file lines: qid measure mean stddev)
  -R format     relevance format: qrels (default), prefs (qid jg jsg docno
                level), qrels_prefs (a qrels read as preferences, one judgment
                group per value of its second column), qrels_jg (a qrels whose
                second column names the judgment group)
  -T trec_results
                results format (only 'trec_results')
  -D N[.qid]    evaluate only topic qid (no debug output is printed)
  -v            print the version and exit
"""
)


# ---------------------------------------------------------------------------
# C number parsing (atol / atof prefixes)

_ATOL = re.compile(rb"^[ \t\n\v\f\r]*([+-]?[0-9]+)")
_ATOF = re.compile(
    rb"^[ \t\n\v\f\r]*([+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    rb"|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


def atol(s: str) -> int:
    m = _ATOL.match(s.encode("utf-8", "surrogateescape"))
    return int(m.group(1)) if m else 0


def atof(s: str) -> float:
    m = _ATOF.match(s.encode("utf-8", "surrogateescape"))
    return float(m.group(1)) if m else 0.0


def lround(x: float) -> int:
    """C ``lround``: half away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


# The measures of m_ndcg.c, which share one parameter block.
_SHARED_GAINS = frozenset({"dcg", "ideal_dcg", "ndcg"})

# -R format -> the kind of measures it serves (Meas.rel)
_REL_FORMATS = {"qrels": "qrels", "prefs": "prefs", "qrels_prefs": "prefs", "qrels_jg": "qrels_jg"}

_SHORT = {  # flag -> takes an argument
    "h": False, "v": False, "q": False, "m": True, "c": False, "l": True, "n": False,
    "D": True, "J": False, "N": True, "M": True, "R": True, "T": True, "o": False, "Z": True,
}  # fmt: skip
_LONG = {  # name -> (short flag, takes an argument)
    "help": ("h", False),
    "version": ("v", False),
    "query_eval_wanted": ("q", False),
    "measure": ("m", True),
    "complete_rel_info_wanted": ("c", False),
    "level_for_rel": ("l", True),
    "nosummary": ("n", False),
    "Debug_level": ("D", True),
    "Judged_docs_only": ("J", False),
    "Number_docs_in_coll": ("N", True),
    "Max_retrieved_per_topic": ("M", True),
    "Rel_info_format": ("R", True),
    "Results_format": ("T", True),
    "Output_old_results_format": ("o", True),
    "Zscore": ("Z", True),
}


def _getopt(argv: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """GNU ``getopt_long`` with trec_eval's options: permuting, clustered short
    flags, ``-mX`` / ``-m X``, ``--name=X`` / ``--name X``, unambiguous prefixes."""
    opts: list[tuple[str, str]] = []
    positional: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            positional.extend(argv[i:])
            break
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            hits = [n for n in _LONG if n == name] or [n for n in _LONG if n.startswith(name)]
            if len(hits) != 1:
                what = "ambiguous" if hits else "unrecognized"
                raise UsageError(f"{what} option '--{name}'")
            flag, takes = _LONG[hits[0]]
            if takes and not eq:
                if i >= len(argv):
                    raise UsageError(f"option '--{hits[0]}' requires an argument")
                value = argv[i]
                i += 1
            elif not takes and eq:
                raise UsageError(f"option '--{hits[0]}' doesn't allow an argument")
            opts.append((flag, value))
            continue
        if a.startswith("-") and a != "-":
            j = 1
            while j < len(a):
                flag = a[j]
                j += 1
                if flag not in _SHORT:
                    raise UsageError(f"invalid option -- '{flag}'")
                if _SHORT[flag]:
                    if j < len(a):
                        value = a[j:]
                    elif i < len(argv):
                        value = argv[i]
                        i += 1
                    else:
                        raise UsageError(f"option requires an argument -- '{flag}'")
                    opts.append((flag, value))
                    break
                opts.append((flag, ""))
            continue
        positional.append(a)
    return opts, positional


def _mark(text: str, marked: set[str], meas_args: list[tuple[str, str]]) -> None:
    """trec_eval's ``mark_measure``: ``name[.params]``, name a measure or nickname."""
    name, dot, params = text.partition(".")
    if dot:
        if not params:
            raise UsageError(f"improper measure in parameter '{name}'")
        meas_args.append((name, params))
    if name in NICKNAMES:
        marked.update(NICKNAMES[name])
    elif name in BY_NAME:
        marked.add(name)
    else:
        raise UsageError(f"illegal measure '{text}'")


def _params(me: Meas, meas_args: list[tuple[str, str]]) -> tuple | list:
    """The measure's parameters: the first ``-m name.params`` for it, else its defaults."""
    given = next((p for n, p in meas_args if n == me.name), None)
    if me.init == "cut_long":
        if given is None:
            return list(me.defaults)
        cuts = sorted(atol(s) for s in given.split(","))
        if cuts[0] <= 0:
            raise UsageError(f"measure '{me.name}': cutoffs must be positive ('{given}')")
        if len(set(cuts)) != len(cuts):
            raise UsageError(f"measure '{me.name}': duplicate cutoffs ('{given}')")
        return cuts
    if me.init == "cut_double":
        if given is None:
            return list(me.defaults)
        xs = sorted(atof(s) for s in given.split(","))
        if len(set(xs)) != len(xs):
            raise UsageError(f"measure '{me.name}': duplicate cutoffs ('{given}')")
        return xs
    if me.init == "p_double":
        if given is None:
            return (tuple(me.defaults), None)
        return (tuple(atof(s) for s in given.split(",")), given)
    if me.init == "p_pair":
        if given is None:
            return ((), None)
        pairs = []
        for part in given.split(","):
            key, eq, value = part.partition("=")
            if not eq or "=" in value:
                raise UsageError(f"malformed pair parameters in '{given}'")
            pairs.append((key, atof(value)))
        return (tuple(pairs), given)
    return ()


def parse_args(argv: list[str]) -> tuple[Opts, list[Meas], dict[str, list], list[str]]:
    flags, positional = _getopt(argv)
    o = Opts()
    marked: set[str] = set()
    meas_args: list[tuple[str, str]] = []
    any_m = False
    for flag, value in flags:
        if flag == "h":
            o.help = True
        elif flag == "v":
            raise VersionRequested()
        elif flag == "q":
            o.query = True
        elif flag == "m":
            _mark(value, marked, meas_args)
            any_m = True
        elif flag == "c":
            o.complete = True
        elif flag == "l":
            o.level = atol(value)
        elif flag == "n":
            o.summary = False
        elif flag == "D":
            _level, dot, qid = value.partition(".")
            if dot:
                o.debug_query = qid
        elif flag == "J":
            o.judged_only = True
        elif flag == "N":
            o.num_docs = atol(value)
        elif flag == "M":
            o.max_docs = atol(value)
        elif flag == "R":
            o.rel_format = value
        elif flag == "T":
            o.results_format = value
        elif flag == "Z":
            o.zscores = value
        # "o": obsolete in trec_eval, no effect
    if o.help:
        return o, [], {}, positional
    if len(positional) != 2:
        raise UsageError(f"expected 2 files (qrels, results), got {len(positional)}")
    if o.rel_format not in _REL_FORMATS:
        raise UsageError(f"Illegal rel_format '{o.rel_format}'")
    if o.results_format != "trec_results":
        raise UsageError(f"Illegal retrieval results format '{o.results_format}'")
    if not any_m:
        _mark("official", marked, meas_args)
    shared = _SHARED_GAINS & marked
    if len(shared) > 1 and any(n in _SHARED_GAINS for n, _ in meas_args):
        # m_ndcg.c gives dcg, ideal_dcg and ndcg one shared parameter block: the
        # gains given to one are used by the others, and at the end each frees the
        # same strings, so trec_eval 10.0 aborts (double free, or a segfault) and
        # its buffered output is lost.  No output of trec_eval's to reproduce: refuse.
        raise UsageError(
            f"{' and '.join(sorted(shared))} with gain parameters in one call: trec_eval "
            "10.0 shares one parameter list between them and aborts; evaluate them in "
            "separate calls"
        )
    measures = [me for me in MEASURES if me.name in marked]
    slots: dict[str, list] = {}
    for me in measures:
        if me.rel != "any" and _REL_FORMATS[o.rel_format] != me.rel:
            # trec_eval stops on the first query ("Can't calculate measure")
            raise UsageError(
                f"measure '{me.name}' needs -R "
                + ("prefs or -R qrels_prefs" if me.rel == "prefs" else me.rel)
                + f", not -R {o.rel_format}"
            )
        if me.build is not None:
            try:
                slots[me.name] = me.build(me, _params(me, meas_args), o)
            except RanklensInputError as e:
                raise UsageError(f"measure '{me.name}': {e}") from None
    return o, measures, slots, positional


class VersionRequested(Exception):
    pass
