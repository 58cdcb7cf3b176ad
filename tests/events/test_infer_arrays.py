"""The array forms of infer's distance helpers against their scalar twins."""
import numpy as np

from vision_ref.events.infer import _seg_point_dist, _seg_point_dists, _seg_seg_dists


def _seg_seg_dist(a1, b1, a2, b2) -> float:
    """The scalar reference: 0 when the segments cross, else the least end-point distance."""
    def orient(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    d1, d2 = orient(a2, b2, a1), orient(a2, b2, b1)
    d3, d4 = orient(a1, b1, a2), orient(a1, b1, b2)
    if d1 * d2 < 0 and d3 * d4 < 0:
        return 0.0
    return min(_seg_point_dist(a1, a2, b2), _seg_point_dist(b1, a2, b2),
               _seg_point_dist(a2, a1, b1), _seg_point_dist(b2, a1, b1))


def test_array_distances_match_the_scalar_ones():
    rng = np.random.default_rng(11)
    for _ in range(50):
        n = 40
        a1, b1 = rng.normal(0, 50, (n, 2)), rng.normal(0, 50, (n, 2))
        b1[:5] = a1[:5]  # degenerate segments (points)
        p, a2, b2 = rng.normal(0, 50, 2), rng.normal(0, 50, 2), rng.normal(0, 50, 2)
        pts = rng.normal(0, 50, (n, 2))
        np.testing.assert_allclose(_seg_point_dists(pts, a2, b2), [_seg_point_dist(q, a2, b2) for q in pts],
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_seg_point_dists(p, a1, b1), [_seg_point_dist(p, a, b) for a, b in zip(a1, b1)],
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(_seg_seg_dists(a1, b1, a2, b2),
                                   [_seg_seg_dist(a, b, a2, b2) for a, b in zip(a1, b1)], rtol=1e-12, atol=1e-12)
