"""Errors that reach the user as one clear line and a non-zero exit status.

Every stage raises a subclass of :class:`VisionRefError` for bad input; the CLI
prints ``error: <message>`` and exits with ``exit_code``. Anything else is a bug.
"""


class VisionRefError(Exception):
    """Bad input or an unusable environment, described for the user."""

    exit_code = 1


class ContractError(VisionRefError):
    """A shot record, match file or decision breaks the JSON contract (SHOT_RECORD.md)."""

    exit_code = 2

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class CalibrationError(VisionRefError):
    """A calibration cannot be made, or a profile does not fit the footage."""

    exit_code = 3


class VideoError(VisionRefError):
    """A video cannot be opened, decoded or written."""

    exit_code = 4


class SourceError(VisionRefError):
    """A frame source (camera, file, synthetic) failed or disappeared."""

    exit_code = 5
