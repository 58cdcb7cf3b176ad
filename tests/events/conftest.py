import math

import pytest

from vision_ref.sim.physics import Layout, Script, Strike, simulate


@pytest.fixture(scope="session")
def carom_shot():
    """Cue ball into white1 (at rest on spot 1), white1 on to a cushion."""
    return simulate(Layout.standard(), Strike(speed=3000.0, angle=math.atan2(-150.0, 200.0)))


@pytest.fixture(scope="session")
def pin_shot():
    """Cue ball through the pin cross: pin-pin chains and a cue knock (F5)."""
    return simulate(Layout.standard(), Strike(speed=3000.0, angle=math.atan2(-150.0, 910.0 - 200.0)))


@pytest.fixture(scope="session")
def off_table_shot():
    return simulate(Layout.standard(), Strike(speed=4000.0, angle=math.pi / 2 + 0.2),
                    script=Script(off_table={"cue": 1}))
