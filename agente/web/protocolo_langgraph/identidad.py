"""Quién llama por el protocolo: el mismo token firmado que la API propia, de cliente o
de quien firma, en ``Authorization: Bearer`` (``headers`` del SDK) o en ``x-api-key``
(``api_key`` del SDK). Las comprobaciones son las de ``agente.web.entrada.auth``: cliente de su
tienda; firmante activo (una baja corta el acceso al momento)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Annotated

import jwt
from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials

from agente.servicio.resultados import Encargado
from agente.web.entrada import auth
from agente.web.infra.dependencias import AjustesWeb, ServicioWeb
from nucleo.contexto import ContextoCliente
from nucleo.errores import Prohibido

__all__ = ["QuienLlama", "Quien"]


@dataclass(frozen=True)
class Quien:
    """Un cliente (``ctx``) o alguien que firma (``encargado``): nunca los dos."""

    ctx: ContextoCliente | None = None
    encargado: Encargado | None = None
    caduca: datetime | None = None  # la del token: un flujo abierto se cierra entonces

    @property
    def autor(self) -> str:
        if self.ctx is not None:
            return f"cliente:{self.ctx.cliente_id}"
        return f"{self.encargado.rol}:{self.encargado.encargado_id}"

    def cliente(self, que: str) -> ContextoCliente:
        """El cliente, o 403 si quien llama firma (``que``: lo que intentaba)."""
        if self.ctx is None:
            raise Prohibido(f"{que} es cosa del cliente de la conversación; quien firma "
                            "responde a la pausa con command.resume")
        return self.ctx

    def firmante(self, que: str) -> Encargado:
        """Quien firma, o 403 si es un cliente."""
        if self.encargado is None:
            raise Prohibido(f"{que} es firmar la operación pendiente: solo un encargado, "
                            "gerente o regional de la tienda puede hacerlo")
        return self.encargado


def _sin_validar(token: str) -> dict:
    """Lo que dice el token sin validarlo aún (lo valida ``auth`` a continuación)."""
    try:
        return jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return {}


def quien_llama(
    ajustes: AjustesWeb,
    servicio: ServicioWeb,
    credencial: auth.Credencial,
    request: Request,
    clave: Annotated[str | None, Header(alias="x-api-key", include_in_schema=False)] = None,
) -> Quien:
    token = credencial.credentials if credencial else clave
    cred = HTTPAuthorizationCredentials(scheme="Bearer", credentials=token) if token else None
    datos = _sin_validar(token) if token else {}
    if datos.get("rol") == auth.ROL_ENCARGADO:
        quien = Quien(encargado=auth.encargado_actual(ajustes, servicio, cred))
    else:
        # Un token de una sola conversación (el enlace de un aviso) solo abre esa conversación.
        quien = Quien(ctx=auth.cliente_actual(ajustes, servicio, cred, request))
    exp = datos.get("exp")
    caduca = datetime.fromtimestamp(exp, UTC) if isinstance(exp, int | float) else None
    return replace(quien, caduca=caduca)


QuienLlama = Annotated[Quien, Depends(quien_llama)]
