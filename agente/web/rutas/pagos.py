"""El webhook del proveedor de pagos (Stripe): sin token, lo autentica su firma.

Fuera del documento OpenAPI: no es una API para clientes ni encargados, y su contrato es
el del proveedor (``Stripe-Signature``; una firma que no vale, un evento viejo o fechado en
el futuro, o un cuerpo firmado que no es un evento es 400, que el proveedor no toma como
éxito). Un evento repetido responde 200 sin cambiar nada.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from agente.web.infra.dependencias import ServicioWeb

__all__ = ["RUTA_STRIPE", "router"]

router = APIRouter(prefix="/api/pasarela", tags=["pasarela"])
RUTA_STRIPE = "/api/pasarela/stripe/webhook"


@router.post(RUTA_STRIPE.removeprefix(router.prefix), include_in_schema=False)
async def webhook_stripe(request: Request, servicio: ServicioWeb) -> dict:
    cuerpo = await request.body()
    firma = request.headers.get("stripe-signature")
    return await run_in_threadpool(servicio.recibir_evento_pasarela, cuerpo, firma)
