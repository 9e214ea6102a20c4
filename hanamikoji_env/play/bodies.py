"""What a request to the browser server may hold: each JSON body's schema (:class:`NewGame`,
:class:`Move`, :class:`Turn`, :class:`Watch`) and how a body is read: bounded before it is all
read, declared JSON, parsed strictly, and refused in a short line that never echoes it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError
from starlette.requests import ClientDisconnect

from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.excerpt import clip
from hanamikoji_env.play.protocol import BodyError, json_body

MAX_SEED = 2**63 - 1
MAX_BODY_BYTES = 16 * 1024
"""The largest request body but a replay's (a move or a new game is a few dozen bytes)."""


class NewGame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    opponent: str | None = Field(default=None, max_length=200)
    seat: Annotated[StrictInt, Field(ge=0, le=1)] = 0
    seed: Annotated[StrictInt, Field(ge=0, le=MAX_SEED)] | None = None


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Annotated[StrictInt, Field(ge=0, lt=NUM_ACTIONS)]
    pair_a: (
        Annotated[list[Annotated[StrictInt, Field(ge=0, le=6)]], Field(min_length=2, max_length=2)] | None
    ) = None
    """With a split: the two cards the person calls pair A (the log and the table keep it)."""


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: Annotated[StrictInt, Field(ge=0, le=3)] | None = None
    cards: Annotated[list[Annotated[StrictInt, Field(ge=0, le=6)]], Field(min_length=1, max_length=4)]


class Watch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    players: Annotated[list[Annotated[str, Field(max_length=200)]], Field(min_length=2, max_length=2)]
    seed: Annotated[StrictInt, Field(ge=0, le=MAX_SEED)] | None = None


def parse_json(body: bytes) -> Any:
    """A request body as JSON (:func:`~hanamikoji_env.play.protocol.json_body`), or a 422."""
    try:
        return json_body(body)
    except BodyError as e:
        raise HTTPException(422, str(e)) from None


def validate(model: type[BaseModel], data: Any) -> Any:
    """``data`` as ``model``, or a 422 naming the fields at fault (never echoing the input)."""
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in err['loc']) or 'body'}: {err['msg']}" for err in e.errors()[:5]
        )
        raise HTTPException(422, clip(problems, 300)) from None


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) past ``limit`` bytes before it is all read, and (415)
    unless it is declared ``application/json``."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise HTTPException(415, f"send the body as application/json, not {clip(kind or 'nothing', 40)}")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or len(declared) > 12 or int(declared) > limit):
        raise HTTPException(413, f"a request body here is at most {limit} bytes")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise HTTPException(413, f"a request body here is at most {limit} bytes")
    except ClientDisconnect:  # gone mid-body (or cut by the deadline): nobody to answer, nothing to log
        raise HTTPException(400, "the request body was cut off") from None
    return bytes(body)


def has_body(request: Request) -> bool:
    """Whether a POST carries a body (a new game may come without one: the defaults)."""
    return request.headers.get("content-length", "0") != "0" or "transfer-encoding" in request.headers
