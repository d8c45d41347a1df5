"""Advanced mode's hairlines (`raster.py`): thin straight lines of a rendered page, found in its
pixels, painted out of the picture and drawn as vector strokes instead.

Readers draw a stroke thinner than a device pixel one pixel wide, so at low zoom a 0.25 pt table
border or a 0.2 pt hatching line is a dark one-pixel line, where any picture of it is reduced to
a light grey one. A line drawn at the picture's own width and place gives the same pixels at the
rendering's resolution and what the original shows at lower zoom. The strokes are derived from
the rendered pixels only, like the rest of a rebuilt page: nothing of the source document's
content is carried over.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from PIL import Image

HAIRLINE_DARK = 224  # darker than this is a line's pixel (as MARK_LEVEL)
HAIRLINE_RUN = 48  # pixels at least (23 pt at 150 DPI): shorter runs are left in the picture
HAIRLINE_SAMPLE = 8  # runs are first looked for in every 8th column (6 in a row: >= 48)
MIN_HAIRLINES = 8  # fewer on a page: left in the picture
MAX_HAIRLINE_WIDTH = 1.25  # pixels of darkness summed across (0.6 pt at 150 DPI)
MAX_HAIRLINES = 3000  # more runs on a page: left in the picture (each costs ~0.1 ms to draw)

Stroke = tuple[tuple[int, int, int], float, float, float, float, float]  # colour, width, x0..y1


def hairlines(picture: Image.Image) -> tuple[Image.Image, list[Stroke], int] | None:
    """A page's hairlines: straight runs, across or down, at least HAIRLINE_RUN pixels long and one
    or two pixels thick (the next pixels beside them paper), at least MIN_HAIRLINES of them.
    Returns the picture without them (paper where they were), the lines to draw instead (pixel
    space, y down: colour, width in pixels, ends) and how many; None when the page has fewer, or
    more than MAX_HAIRLINES runs (a bound on the work). Readers draw a stroke thinner than a
    device pixel one pixel wide, so at low zoom a 0.25 pt table border is a dark 1 pt line,
    where any picture of it is reduced to a light grey one (a table page at 72 DPI: 0.87 as a
    picture, however many pixels; 0.97 with its borders drawn as lines). Drawn as a line at the
    picture's own width and place, it is the same pixels at the rendering's resolution and what
    the original shows at lower zoom. Then the slanted ones (`_diagonals`), at most
    MAX_DIAGONALS. About 3 ms for a page without lines, 5-15 more for the slanted ones'
    directions."""
    grey = np.asarray(picture.convert("L"))
    dark = grey < HAIRLINE_DARK
    across = _thin_runs(dark)
    if len(across) > MAX_HAIRLINES:
        return None
    rgb = np.asarray(picture)
    cleaned = rgb.copy()
    strokes = [stroke for line in across
               if (stroke := _erase(cleaned, grey, rgb, line)) is not None]
    runs = len(across)
    seen = grey  # the page's grey levels without the lines across (the histogram's)
    if across or _thin_runs(dark.T, probe=True):
        # Down, once the lines across are gone: where a border crosses another, the one
        # across had left the pixels beside the one down dark.
        grey_t = np.asarray(Image.fromarray(cleaned).convert("L")).T
        seen = grey_t.T
        cleaned_t = cleaned.transpose(1, 0, 2)  # a view: erasing in it erases in `cleaned`
        down = _thin_runs(grey_t < HAIRLINE_DARK)
        runs += len(down)
        if runs > MAX_HAIRLINES:
            return None
        for line in down:
            found = _erase(cleaned_t, grey_t, cleaned_t, line)
            if found is not None:
                colour, width, x0, y, x1, _ = found
                strokes.append((colour, width, y, x0, y, x1))
    # Then at any other angle (hatching, slanted rules), in what is left.
    strokes += _diagonals(cleaned, min(MAX_DIAGONALS, MAX_HAIRLINES - runs), seen)
    if len(strokes) < MIN_HAIRLINES:
        return None
    return Image.fromarray(cleaned), strokes, len(strokes)


def _thin_runs(dark: np.ndarray, probe: bool = False) -> list[tuple[int, int, int, int]]:
    """Runs across `dark` (rows) at least HAIRLINE_RUN long and 1 or 2 rows thick, the rows
    above and below them not dark: (first row, thickness, first column, end column). Rows
    are first picked on every HAIRLINE_SAMPLE-th column (a run covers at least `need` such
    columns in a row), then their runs are measured whole. With `probe`, stops at the
    first."""
    height, width = dark.shape
    need = HAIRLINE_RUN // HAIRLINE_SAMPLE
    sampled = np.zeros((height + 4, -(-width // HAIRLINE_SAMPLE)), dtype=np.bool_)
    sampled[2:-2] = dark[:, ::HAIRLINE_SAMPLE]
    found: list[tuple[int, int, int, int]] = []
    for thick in (1, 2):
        core = (sampled[2:height + 2] & ~sampled[1:height + 1]
                & ~sampled[2 + thick:height + 2 + thick])
        if thick == 2:
            core &= sampled[3:height + 3]
        columns = core.shape[1] - need + 1
        if columns <= 0:
            return found
        window = core[:, :columns].copy()
        for shift in range(1, need):
            window &= core[:, shift:columns + shift]
        for row in np.flatnonzero(window.any(axis=1)).tolist():
            line = dark[row].copy()
            for k in range(thick):
                line &= dark[row + k]
            if row > 0:
                line &= ~dark[row - 1]
            if row + thick < height:
                line &= ~dark[row + thick]
            edges = np.flatnonzero(np.diff(line.astype(np.int8), prepend=0, append=0))
            for start, end in zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True):
                if end - start >= HAIRLINE_RUN:
                    found.append((row, thick, start, end))
                    if probe or len(found) > MAX_HAIRLINES:
                        return found
    return found


# --- diagonal hairlines ---------------------------------------------------------------------

DIAGONAL_MIN_ANGLE = 2.0  # degrees from across or down: nearer lines are left to `_thin_runs`
MAX_DIAGONAL_ANGLES = 4  # directions looked along on a page, the most frequent
MAX_DIAGONALS = 1500  # more on a page: all left in the picture (each costs ~1.5 ms to find)
DIAGONAL_PEAK = 25.0  # a gradient direction this many times the median's: lines (text 7-12x)
DIAGONAL_SHARPNESS = 2.5  # a direction's projection: this many times the median's sharpness
DIAGONAL_PIXELS = 30_000  # edge pixels measured for the directions, at most (a random choice)
DIAGONAL_BATCH = 64  # lines followed at once (neighbours: their columns are about the same)
DIAGONAL_PEAKS = 2  # peaks along a direction over this many times the lines left: too many
DIAGONAL_CELLS = 100_000  # lines x columns followed at once, at most (~6 MB an array)
DIAGONAL_GAP = 4  # columns a line may miss (a crossing line, a line erased across it)
MAX_DIAGONAL_DEVIATION = 0.5  # pixels from the fitted line, at most: curves are left alone
DIAGONAL_INLIERS = 0.97  # of a line's columns within MAX_DIAGONAL_DEVIATION, at least
_GREY_WEIGHTS = np.array([299, 587, 114], dtype=np.int32)  # ITU-R 601, as Pillow's "L", x 1000
DIAGONAL_PAPER = 192  # lighter, 1.45-2.1 px from a line: paper (its anti-aliasing is lighter)


def _diagonals(cleaned: np.ndarray, budget: int, grey: np.ndarray | None) -> list[Stroke]:
    """Straight hairlines at any angle DIAGONAL_MIN_ANGLE or more from across and down,
    painted out of `cleaned` (RGB, in place) and returned as strokes (pixel space, y down);
    none when there are more than `budget` (`cleaned` then unchanged). Direction by
    direction (`_directions`: hatching, slanted rules and frames make them; text and curves
    spread over all directions), the strongest first, the lines along it found and painted
    out (`_along`), then the directions of what is left, at most MAX_DIAGONAL_ANGLES.
    `grey`: `cleaned`'s grey levels, or those of a page with more lines across or down
    (which the directions leave out), if known."""
    strokes: list[Stroke] = []
    tried: list[float] = []
    work = cleaned
    while len(tried) < MAX_DIAGONAL_ANGLES:
        # the strongest direction first; once its lines are gone, the next stands out more
        # (a cross-hatch's second direction)
        seen = _grey(work) if grey is None or tried else grey
        angles = [angle for angle in _directions(seen) if angle not in tried]
        if not angles:
            break
        angle = angles[0]
        tried.append(angle)
        if work is cleaned:
            work = cleaned.copy()  # `cleaned` is left as it was if there are too many
        # within 45 degrees of across: lines y = c + s x; else the same, transposed
        steep = abs(angle) > 45
        slope = float(np.tan(np.radians(90 - abs(angle) if steep else angle)))
        if steep and angle < 0:
            slope = -slope
        picture = work.transpose(1, 0, 2) if steep else work
        found = _along(picture, slope, budget + 1 - len(strokes), refine=True)
        if found is None:
            return []
        if steep:
            found = [(colour, width, y0, x0, y1, x1)
                     for colour, width, x0, y0, x1, y1 in found]
        strokes += found
        if len(strokes) > budget:
            return []  # all left in the picture, not some (as pages of too many runs)
    if strokes:
        cleaned[:] = work
    return strokes


def _grey(rgb: np.ndarray) -> np.ndarray:
    return np.asarray(Image.fromarray(rgb).convert("L"))


def _directions(grey: np.ndarray) -> list[float]:
    """The page's line directions, degrees in (-90, 90) (0 across, y down), most frequent
    first; none within DIAGONAL_MIN_ANGLE of across or down. A cheap look first: the
    gradient's direction at edge pixels (dark, paper next to them), a histogram of 1-degree
    bins; text and curves spread over all directions, lines make a peak DIAGONAL_PEAK times
    the median. (Dense hatching aliases the gradient, 0.2 pt lines 1.6 pt apart at 30
    degrees read as 57.) Only then every direction, 1 degree apart: the dark pixels
    (DIAGONAL_PIXELS of them) projected across it, the sharpest projections' local maxima."""
    # every 4th row (and the rows above and below it): a quarter of the work, and lines at
    # any angle keep pixels in them
    middle = np.arange(1, grey.shape[0] - 1, 4)
    above, level, below = grey[middle - 1], grey[middle], grey[middle + 1]
    dark = level < HAIRLINE_DARK
    edge = dark[:, 1:-1] & ((above[:, 1:-1] >= HAIRLINE_DARK) | (below[:, 1:-1] >= HAIRLINE_DARK)
                            | ~dark[:, :-2] | ~dark[:, 2:])
    ys, xs = _nonzero(edge)
    if len(ys) < HAIRLINE_RUN * MIN_HAIRLINES // 4:
        return []
    edges = 4 * len(ys)  # about, in every row
    step = -(-len(ys) // DIAGONAL_PIXELS)
    ys, xs = ys[::step], xs[::step] + 1
    gx = level[ys, xs + 1].astype(np.float32) - level[ys, xs - 1]
    gy = below[ys, xs].astype(np.float32) - above[ys, xs]
    # a line's direction is across its gradient
    degrees = (np.degrees(np.arctan2(gy, gx)) + 90) % 180  # 0..180, 0 = across
    counts = np.bincount(np.rint(degrees).astype(np.int64) % 180, weights=np.hypot(gx, gy),
                         minlength=180)
    smooth = counts + 0.5 * (np.roll(counts, 1) + np.roll(counts, -1))
    slanted = np.r_[0:180] % 90
    slanted = np.minimum(slanted, 90 - slanted) >= DIAGONAL_MIN_ANGLE
    if not (smooth[slanted] >= float(np.median(smooth)) * DIAGONAL_PEAK + 1e-6).any():
        return []
    # Every row's edges now (a stride would alias with hatching), about DIAGONAL_PIXELS of
    # them chosen at random (the same for the same page), a band of rows at a time.
    keep = min(1.0, DIAGONAL_PIXELS / edges)
    rng = np.random.default_rng(0)
    rows_kept, columns_kept = [], []
    dark = grey < HAIRLINE_DARK
    for top in range(1, grey.shape[0] - 1, 256):
        end = min(top + 256, grey.shape[0] - 1)
        band = dark[top:end, 1:-1] & (~dark[top - 1:end - 1, 1:-1] | ~dark[top + 1:end + 1, 1:-1]
                                      | ~dark[top:end, :-2] | ~dark[top:end, 2:])
        rows, columns = np.nonzero(band)
        chosen = rng.random(len(rows)) < keep
        rows_kept.append(rows[chosen] + top)
        columns_kept.append(columns[chosen] + 1)
    fy = np.concatenate(rows_kept).astype(np.float32)
    fx = np.concatenate(columns_kept).astype(np.float32)
    sharpness = np.zeros(180)
    for degree in range(180):
        if not slanted[degree]:
            continue
        radians = np.radians(degree)
        across = fy * np.float32(np.cos(radians)) - fx * np.float32(np.sin(radians))
        across -= across.min()
        # each pixel shared by the two nearest bins: rounded, whole pixels fall on some
        # bins more than on others at 45 degrees (every 0.707 px), which reads as lines
        low = across.astype(np.int64)
        share = across - low
        found = (np.bincount(low, weights=1 - share, minlength=int(low.max()) + 2)
                 + np.bincount(low + 1, weights=share, minlength=int(low.max()) + 2))
        # what stands out of the projection smoothed over 7 px: lines, not areas
        rest = found - np.convolve(found, np.full(7, 1 / 7), mode="same")
        sharpness[degree] = float(np.dot(rest, rest)) / len(low)
    base = float(np.median(sharpness[slanted]))
    peaks = [degree for degree in range(180) if slanted[degree]
             and sharpness[degree] >= sharpness[degree - 1]
             and sharpness[degree] > sharpness[(degree + 1) % 180]
             and sharpness[degree] >= DIAGONAL_SHARPNESS * base]
    peaks.sort(key=lambda degree: -sharpness[degree])
    return [float(d if d < 90 else d - 180) for d in peaks[:MAX_DIAGONAL_ANGLES]]


def _nonzero(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.nonzero of a 2-D mask as int32 arrays, a band of rows at a time (int64 arrays of a
    whole page of hatching took hundreds of MB)."""
    found = [(np.nonzero(mask[top:top + 256]), top) for top in range(0, mask.shape[0], 256)]
    return (np.concatenate([(rows + top).astype(np.int32) for (rows, _), top in found]),
            np.concatenate([columns.astype(np.int32) for (_, columns), _ in found]))


def _along(picture: np.ndarray, slope: float, budget: int,
           refine: bool) -> list[Stroke] | None:
    """The hairlines y = c + slope * x (|slope| <= 1, pixel centres, y down) of `picture`
    (RGB), painted out of it. The slope is refined first (the sharpest projection of the
    dark pixels within 1.5 degrees, 0.1 apart); each peak of the darkness projected along it
    is followed across the page: a column is on the line where a pixel within 0.75 px of it
    is dark and those 1.45-2.1 px from it are paper, a line runs on over DIAGONAL_GAP columns
    off it, and is kept when HAIRLINE_RUN px long or more, under MAX_HAIRLINE_WIDTH of
    summed darkness across, and within MAX_DIAGONAL_DEVIATION of the straight line fitted
    through its columns' centres. None when the peaks are more than DIAGONAL_PEAKS times
    `budget` (there are too many lines)."""
    grey = _grey(np.ascontiguousarray(picture))
    height, width = grey.shape
    ys, xs = _nonzero(grey < HAIRLINE_DARK)
    if len(ys) < HAIRLINE_RUN:
        return []
    step = -(-len(ys) // DIAGONAL_PIXELS)
    sy, sx = ys[::step].astype(np.float64), xs[::step].astype(np.float64)
    base = float(np.degrees(np.arctan(slope)))
    best, sharpest = slope, -1.0
    for degrees in np.arange(base - 1.5, base + 1.51, 0.1) if refine else ():
        s = float(np.tan(np.radians(degrees)))
        bins = np.rint(sy - s * sx)
        counts = np.bincount((bins - bins.min()).astype(np.int64))
        sharpness = float(np.dot(counts, counts))
        if sharpness > sharpest:
            best, sharpest = s, sharpness
    slope = best
    cosine = 1 / float(np.hypot(1.0, slope))
    offset = np.rint(ys - np.float32(slope) * xs).astype(np.int32)
    low = int(offset.min())
    offset -= low
    profile = np.bincount(offset, weights=255 - grey[ys, xs].astype(np.float32))
    padded = np.concatenate([[0.0, 0.0], profile, [0.0, 0.0]])
    middle = padded[2:-2]
    around = padded[1:-3] + middle + padded[3:-1]
    peaks = np.flatnonzero((middle >= padded[1:-3]) & (middle > padded[3:-1])
                           & (around >= 0.25 * 255 * HAIRLINE_RUN * cosine))
    if len(peaks) > DIAGONAL_PEAKS * budget:
        return None  # surely more lines than the budget: not worth following
    need = int(HAIRLINE_RUN * cosine)
    # each peak's columns: from the first to the last of its dark pixels
    order = np.argsort(offset, kind="stable")
    ranked, ranked_x = offset[order], xs[order]
    del order, offset, ys, xs
    starts = np.searchsorted(ranked, peaks, side="left")
    ends = np.searchsorted(ranked, peaks, side="right")
    ks = np.arange(-3, 4)
    strokes: list[Stroke] = []
    spans = [(int(ranked_x[a:b].min()), int(ranked_x[a:b].max()))
             for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    first = 0
    while first < len(peaks):
        # neighbouring lines together, as many as DIAGONAL_CELLS lines x columns hold
        (lo, hi), count = spans[first], 1
        while first + count < len(peaks) and count < DIAGONAL_BATCH:
            a, b = spans[first + count]
            if (count + 1) * (max(hi, b) - min(lo, a) + 5) > DIAGONAL_CELLS:
                break
            lo, hi, count = min(lo, a), max(hi, b), count + 1
        chosen = peaks[first:first + count]
        first += count
        left = max(0, lo - 2)
        columns = np.arange(left, min(width, hi + 3))
        # the peak's middle, to a fraction of a row: its bin and the two beside it, weighed
        c = (low + chosen + (padded[chosen + 3] - padded[chosen + 1])
             / np.maximum(around[chosen], 1e-6))
        centre = c[:, None] + slope * columns[None, :]  # lines x columns
        nearest = np.rint(centre).astype(np.int64)
        rows = nearest[:, :, None] + ks  # lines x columns x 7
        inside = (rows >= 0) & (rows < height)
        clipped = np.clip(rows, 0, height - 1)
        values = np.where(inside, 255 - grey[clipped, columns[None, :, None]].astype(np.int16),
                          0)
        distance = np.abs(rows - centre[:, :, None]) * cosine
        core = ((distance <= 0.75) & (values >= 256 - HAIRLINE_DARK)).any(axis=2)
        beside = ((distance >= 1.45) & (distance <= 2.1) & (values > 255 - DIAGONAL_PAPER)
                  ).any(axis=2)
        on = core & ~beside & inside[:, :, 3]
        band = distance <= 1.45
        weights = np.where(band, values, 0).astype(np.float64)
        across = weights.sum(axis=2)
        middles = (weights * rows).sum(axis=2) / np.maximum(across, 1e-6)
        for index in range(len(c)):
            if len(strokes) >= budget:
                return strokes
            marks = on[index]
            if marks.sum() < need:
                continue
            strokes += [(colour, thickness, x0 + left, y0, x1 + left, y1)
                        for colour, thickness, x0, y0, x1, y1 in _follow(
                            picture[:, left:left + len(columns)], marks, middles[index],
                            across[index], slope, cosine, need)]
    return strokes[:budget]


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The least-squares line y = a x + b through the points: (a, b), as np.polyfit's
    coefficients (a fifth of its time)."""
    x = x.astype(np.float64)
    mx, my = float(x.mean()), float(y.mean())
    dx = x - mx
    a = float(np.dot(dx, y - my)) / max(float(np.dot(dx, dx)), 1e-9)
    return a, my - a * mx


def _follow(picture: np.ndarray, marks: np.ndarray, middles: np.ndarray,
            across: np.ndarray, slope: float, cosine: float, need: int) -> list[Stroke]:
    """The lines along one peak (`_along`): its columns on the line (`marks`) grouped over
    gaps of DIAGONAL_GAP or fewer, each group `need` columns long or more, straight and thin
    enough, painted out (pixels within 1.2 px of it) and returned as a stroke whose colour
    and width are its pixels' darkness summed across, as `_erase` does across and down."""
    found: list[Stroke] = []
    on = np.flatnonzero(marks)
    breaks = np.flatnonzero(np.diff(on) > DIAGONAL_GAP + 1)
    ks = np.arange(-3, 4)
    for group in np.split(on, breaks + 1):
        first, last = int(group[0]), int(group[-1])
        if last - first + 1 < need:
            continue
        fitted = _fit(group, middles[group])
        # distances across the line; a crossing or the end at a frame pulls a few columns
        close = (np.abs(fitted[0] * group + fitted[1] - middles[group]) * cosine
                 <= MAX_DIAGONAL_DEVIATION)
        if close.mean() < DIAGONAL_INLIERS:
            continue
        fitted = _fit(group[close], middles[group[close]])
        total = float(across[group].mean()) * cosine
        width = max(1.0, total / 255)
        if width > MAX_HAIRLINE_WIDTH:
            continue
        slope_fit, intercept = fitted
        columns = np.arange(first, last + 1)
        centre = slope_fit * columns + intercept
        rows = np.rint(centre).astype(np.int64)[:, None] + ks
        distance = np.abs(rows - centre[:, None]) * cosine
        near = (rows >= 0) & (rows < picture.shape[0]) & (distance <= 2.1)
        at = np.broadcast_to(columns[:, None], rows.shape)[near]
        rows_near, distance = rows[near], distance[near]
        pixels = picture[rows_near, at].astype(np.int32)
        band = (distance <= 1.45) & marks[at]
        channels = (255 - pixels[band]).sum(axis=0) * cosine / len(group)
        colour = tuple(round(255 - min(255.0, float(v) / width)) for v in channels[:3])
        # the line, and the light anti-aliasing beside it (a threshold would make it ink)
        light = pixels @ _GREY_WEIGHTS >= DIAGONAL_PAPER * 1000
        erase = (distance <= 1.2) | light
        picture[rows_near[erase], at[erase]] = 255
        y0 = slope_fit * (first - 0.5) + intercept + 0.5
        y1 = slope_fit * (last + 0.5) + intercept + 0.5
        found.append((cast("tuple[int, int, int]", colour), width, float(first), y0,
                      float(last + 1), y1))
    return found


def _erase(cleaned: np.ndarray, grey: np.ndarray, rgb: np.ndarray,
           line: tuple[int, int, int, int]) -> Stroke | None:
    """Paint a line across (and the paper-light anti-aliasing beside it) as paper in
    `cleaned`; returns it as a stroke: its colour and width from its pixels' darkness (summed
    across: a line under a pixel wide is drawn one pixel wide, its colour what that sum
    leaves), its centre the darkness-weighted middle of its rows. None, and nothing painted,
    for a line wider than MAX_HAIRLINE_WIDTH: drawn partly as lines and partly as pixels (2
    rows thick here, 3 there), a table of 0.75 pt borders looked less like itself."""
    row, thick, start, end = line
    first, last = max(row - 1, 0), min(row + thick + 1, grey.shape[0])
    darkness = 255.0 - grey[first:last, start:end].mean(axis=1)
    channels = 255.0 - rgb[first:last, start:end].reshape(last - first, end - start, -1) \
        .mean(axis=1)[:, :3]
    total = float(darkness.sum())
    centre = float((darkness * (np.arange(first, last) + 0.5)).sum()) / max(total, 1e-6)
    width = max(1.0, total / 255)
    if width > MAX_HAIRLINE_WIDTH:
        return None
    colour = tuple(round(255 - min(255.0, float(v) / width))
                   for v in channels.sum(axis=0))
    band = cleaned[first:last, start:end]
    light = grey[first:last, start:end] >= HAIRLINE_DARK
    light[row - first:row - first + thick] = True
    band[light] = 255
    return (cast("tuple[int, int, int]", colour), width, start, centre, end, centre)


def content(strokes: list[Stroke], pixels: tuple[int, int], points: tuple[float, float],
             ) -> bytes:
    """The lines as one content stream fragment, in the rendering's pixel space (y up),
    grouped by colour and width."""
    width, height = pixels
    groups: dict[tuple[tuple[int, int, int], float], list[str]] = {}
    for colour, thickness, x0, y0, x1, y1 in strokes:
        groups.setdefault((colour, round(thickness, 2)), []).append(
            f"{x0:.2f} {height - y0:.2f} m {x1:.2f} {height - y1:.2f} l")
    ops = [f"q {points[0] / width:.10f} 0 0 {points[1] / height:.10f} 0 0 cm 0 J"]
    for (colour, thickness), lines in groups.items():
        r, g, b = (f"{v / 255:.3f}" for v in colour)
        ops.append(f"{r} {g} {b} RG {thickness} w")
        ops += lines
        ops.append("S")
    ops.append("Q")
    return "\n".join(ops).encode()
