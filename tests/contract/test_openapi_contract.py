"""/openapi.json is OpenAPI 3.1, version 0.1.0, MIT, and publishes exactly the allowlist."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI, Response
from openapi_spec_validator import validate

from predmarket.app import create_app
from predmarket.kit.errors import NotFound
from predmarket.kit.facets import FacetsParam, OptionalFacets
from predmarket.kit.fields import FieldSelection, fields_param
from predmarket.kit.pagination import PageRequest, Pagination, page_params
from predmarket.kit.schemas import Amount, BaseSchema, UtcDateTime, example
from predmarket.openapi import TAGS, build_openapi, public, published_routes
from predmarket.settings import Settings

pytestmark = pytest.mark.db

ROUTES_FILE = Path(__file__).with_name("openapi_routes.txt")
ERROR_REF = "#/components/schemas/ErrorEnvelope"
OPERATION_ID = re.compile(r"[a-z][A-Za-z]*:[a-z][A-Za-z0-9]*")


def checked_in() -> list[str]:
    lines = ROUTES_FILE.read_text().splitlines()
    return sorted(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@pytest.fixture
async def doc(client: httpx.AsyncClient) -> dict[str, Any]:
    r = await client.get("/openapi.json")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    body: dict[str, Any] = r.json()
    return body


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method, op in item.items():
            yield f"{method.upper()} {path}", op


async def test_is_a_valid_openapi_3_1_document(doc: dict[str, Any]) -> None:
    assert doc["openapi"] == "3.1.0"
    validate(doc)  # the OpenAPI 3.1 meta-schema


async def test_version_and_license(doc: dict[str, Any]) -> None:
    assert doc["info"]["version"] == "0.1.0"
    assert doc["info"]["license"] == {"name": "MIT", "identifier": "MIT"}
    assert doc["info"]["title"] == "predmarket"


async def test_publishes_exactly_the_checked_in_routes(doc: dict[str, Any]) -> None:
    published = published_routes(doc)
    assert published == checked_in(), (
        "the public API changed. If that is on purpose, update tests/contract/openapi_routes.txt "
        "to:\n" + "\n".join(published)
    )


async def test_framework_documents_are_off(client: httpx.AsyncClient) -> None:
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        assert (await client.get(path)).status_code == 404


async def test_every_operation_is_documented(doc: dict[str, Any]) -> None:
    for where, op in operations(doc):
        assert OPERATION_ID.fullmatch(op["operationId"]), where
        assert op["tags"][0] in TAGS, where
        assert op.get("description") or op.get("summary"), where
        ok = [s for s in op["responses"] if s.startswith("2")]
        assert ok, f"{where} has no success response"
        for status in ok:
            if status != "204":
                # JSON everywhere, except the realtime stream's event stream.
                content = op["responses"][status]["content"]
                media = "text/event-stream" if where.endswith("/v1/realtime/stream") else None
                assert content[media or "application/json"]["schema"], where
        # validation errors are 400 here; a 422 is only ever a declared error (spec 7.2:
        # INSUFFICIENT_BALANCE of a build call), never FastAPI's HTTPValidationError
        unprocessable = op["responses"].get("422", {})
        assert "HTTPValidationError" not in json.dumps(unprocessable), where
        errors = {s: r for s, r in op["responses"].items() if s[0] in "45"}
        assert errors["500"]["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}
        if op.get("parameters") or op.get("requestBody"):
            assert errors["400"]["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}
        for status, response in errors.items():
            assert response["content"]["application/json"]["schema"], f"{where} {status}"


async def test_schemas_are_named_plainly_and_have_examples(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    for name, schema in schemas.items():
        # A module-qualified name means two models share a class name: rename one.
        assert "__" not in name and "." not in name, name
        assert "examples" in schema or "enum" in schema, f"schema {name} has no example"


async def test_every_reference_resolves(doc: dict[str, Any]) -> None:
    text = json.dumps(doc)
    for ref in set(re.findall(r'"\$ref": "([^"]+)"', text)):
        assert ref.startswith("#/components/schemas/")
        assert ref.removeprefix("#/components/schemas/") in doc["components"]["schemas"], ref


async def test_the_envelope_schema_has_both_shapes(doc: dict[str, Any]) -> None:
    envelope = doc["components"]["schemas"]["ErrorEnvelope"]
    assert set(envelope["required"]) == {
        "statusCode",
        "code",
        "message",
        "requestId",
        "details",
        "error",
    }
    body = doc["components"]["schemas"]["ErrorBody"]
    assert set(body["required"]) == {"code", "message", "requestId", "details"}


class TestAllowlist:
    """A route is private until marked public; the marker is checked when the document is built."""

    def make(self, tmp_path: Path, router: APIRouter) -> FastAPI:
        app = create_app(Settings(data_dir=tmp_path, secret_key="s" * 40))
        app.include_router(router)
        return app

    def test_an_unmarked_route_stays_out(self, tmp_path: Path) -> None:
        router = APIRouter(prefix="/v1/markets", tags=["Markets"])

        @router.get("/{market_address}")
        async def get_market(market_address: str) -> dict[str, str]:
            return {"marketAddress": market_address}

        doc = build_openapi(self.make(tmp_path, router))
        assert "/v1/markets/{market_address}" not in doc["paths"]
        assert published_routes(doc) == checked_in()

    def test_a_marked_route_is_published_with_its_errors(self, tmp_path: Path) -> None:
        router = APIRouter(prefix="/v1/markets", tags=["Markets"])

        @router.get("/{market_address}", **public("probe", errors=[NotFound]))
        async def get_market(market_address: str) -> dict[str, str]:
            """One market."""
            return {"marketAddress": market_address}

        doc = build_openapi(self.make(tmp_path, router))
        op = doc["paths"]["/v1/markets/{market_address}"]["get"]
        assert op["operationId"] == "markets:probe"
        assert sorted(op["responses"]) == ["200", "400", "404", "500"]
        assert op["responses"]["404"]["description"] == "Error codes: NOT_FOUND"
        assert "x-predmarket-public" not in json.dumps(doc)
        names = [t["name"] for t in doc["tags"]]
        assert "Markets" in names and names == [t for t in TAGS if t in names]
        validate(doc)

    @pytest.mark.parametrize("tags", [[], ["Nope"], ["Markets", "Tags"]])
    def test_a_public_route_needs_one_spec_tag(self, tmp_path: Path, tags: list[str]) -> None:
        router = APIRouter(prefix="/v1/x", tags=tags)

        @router.get("", **public("list"))
        async def list_x() -> dict[str, str]:
            return {}

        with pytest.raises(ValueError, match="tag"):
            build_openapi(self.make(tmp_path, router))

    def test_operation_ids_are_unique(self, tmp_path: Path) -> None:
        router = APIRouter(prefix="/v1/x", tags=["Health"])

        @router.get("/a", **public("liveness"))
        async def a() -> dict[str, str]:
            return {}

        with pytest.raises(ValueError, match="already used"):
            build_openapi(self.make(tmp_path, router))

    def test_the_operation_id_takes_the_tag_in_camel_case(self, tmp_path: Path) -> None:
        router = APIRouter(prefix="/v1/developer-keys", tags=["Developer keys"])

        @router.post("", **public("create"))
        async def create() -> dict[str, str]:
            return {}

        doc = build_openapi(self.make(tmp_path, router))
        assert doc["paths"]["/v1/developer-keys"]["post"]["operationId"] == "developerKeys:create"


class Thing(BaseSchema):
    model_config = example({"id": 1, "volume": "1000", "createdAt": "2025-01-02T03:04:05.678Z"})

    id: int
    volume: Amount
    created_at: UtcDateTime


class ThingPage(BaseSchema):
    model_config = example({"things": [], "pagination": {"limit": 50, "nextCursor": None}})

    things: list[Thing]
    pagination: Pagination
    facets: OptionalFacets = None


ThingPageDep = Annotated[PageRequest, Depends(page_params(default_limit=50))]
ThingFields = Annotated[FieldSelection, Depends(fields_param(Thing))]


def test_a_published_list_documents_the_kit(tmp_path: Path) -> None:
    """Paging, fields and facets parameters and their schemas, as a domain list will have them."""
    router = APIRouter(prefix="/v1/things", tags=["Markets"])

    @router.get("", response_model=ThingPage, **public("listThings"))
    async def list_things(
        page: ThingPageDep, selection: ThingFields, facets: FacetsParam = False
    ) -> ThingPage | Response:
        """Things."""
        raise NotImplementedError

    app = create_app(Settings(data_dir=tmp_path, secret_key="s" * 40))
    app.include_router(router)
    doc = build_openapi(app)
    validate(doc)
    op = doc["paths"]["/v1/things"]["get"]
    params = {p["name"]: p for p in op["parameters"]}
    assert sorted(params) == ["cursor", "facets", "fields", "limit", "page"]
    assert params["limit"]["schema"]["maximum"] == 200
    assert params["limit"]["schema"]["default"] == 50
    assert "400" in op["responses"]
    schemas = doc["components"]["schemas"]
    for name in ("Thing", "ThingPage", "Pagination", "Facets", "FacetCount"):
        assert "examples" in schemas[name], name
    thing = schemas["Thing"]["properties"]
    assert thing["volume"]["pattern"] == "^(0|[1-9][0-9]*)$"
    assert thing["createdAt"]["format"] == "date-time"
    assert set(schemas["Pagination"]["required"]) == {"limit", "nextCursor"}
