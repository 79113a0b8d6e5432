"""El paso del modelo offline para un reenvío, y el «sí» o el «no» al reenvío ofrecido."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import BaseMessage

from agente.modelo_offline.articulo import otro_articulo
from agente.modelo_offline.comprension import RE_NO, RE_SI
from agente.modelo_offline.lectura import PATRONES, RE_PEDIDO, Tarea, lineas_mencionadas, normalizar
from agente.modelo_offline.pasos import (
    Contexto,
    Paso,
    fin,
    lineas_de,
    pedido_consultado,
    unidades_limitadas,
)
from operaciones.reenvio import frases
from operaciones.reenvio.declaracion import REENVIO

__all__ = ["paso", "respuesta"]


def paso(tarea: Tarea, ctx: Contexto) -> Paso | list[Paso]:
    """«No me ha llegado»: todo lo que no llegó (o lo que nombre); «llegó roto, mandadme
    otro»: una unidad de lo que nombre. Sin enviar o cancelado se dice sin llamar a nada."""
    hechas = [ll for ll in ctx.llamadas if ll.nombre == REENVIO.herramienta
              and str(ll.args.get("pedido", "")).upper() == str(tarea.pedido or "").upper()]
    if tarea.pedido and hechas:
        return fin("\n".join(frases.redactar(tarea.pedido, llamada) for llamada in hechas))
    pedido = pedido_consultado(tarea, ctx, "tramitar el reenvío")
    if isinstance(pedido, Paso):
        return pedido
    if pedido.get("estado") in ("pendiente", "cancelado"):  # la herramienta lo rechazaría
        return fin(frases.no_posible(tarea.pedido, pedido.get("estado")))
    roto = bool(frases.RE_ROTO.search(normalizar(tarea.texto)))
    todas = lineas_de(pedido)
    if frases.pide_opciones(tarea.texto) and not roto:  # «¿qué podéis hacer?»: se ofrece, no se hace
        oferta = {"pedido": tarea.pedido, "texto": frases.sin_opciones(tarea.texto)}
        return Paso(tipo="fin", texto=frases.opciones(tarea.pedido, pedido.get("estado"), todas),
                    args={frases.PROPUESTA_REENVIO: oferta})
    if otro := otro_articulo(tarea, todas):
        return otro
    elegidas = lineas_mencionadas(todas, tarea.texto)
    if not elegidas and (len(todas) == 1 or not roto):
        elegidas = todas  # un solo producto, o no ha llegado nada del pedido
    if not elegidas or (roto and len(elegidas) != 1):
        return fin(frases.elegir_producto(tarea.pedido, todas))
    motivo = "llego_roto" if roto else "no_llego"
    llamadas = [
        ctx.pedir(REENVIO.herramienta, {
            "pedido": tarea.pedido, "linea": int(linea["linea"]),
            "unidades": unidades_limitadas(tarea.texto, linea) or (1 if roto else int(linea.get("unidades") or 1)),
            "motivo": motivo, "descripcion": tarea.texto.strip()[:500]})
        for linea in elegidas
    ]
    return llamadas  # una por línea: van juntas en un mensaje (una sola revisión)


def respuesta(texto: str, anteriores: Sequence[BaseMessage]) -> list[Tarea] | None:
    """Lo que responde al reenvío que ofreció la última respuesta (``frases.opciones``): «sí»
    (o «sí, reenviádmelo») es la queja de antes, ya sin la pregunta; «no» o «espero», nada.
    None si no hay oferta o el mensaje pide otra cosa."""
    oferta = frases.ofrecido(anteriores)
    if not oferta or set(p.upper() for p in RE_PEDIDO.findall(texto)) - {str(oferta["pedido"])}:
        return None
    normal = normalizar(texto)
    intencion = REENVIO.offline.intencion
    otras = {i for i, patron in PATRONES if patron.search(normal)} - {intencion}
    if not otras and RE_SI.search(normal):
        return [Tarea(tipo=intencion, pedido=str(oferta["pedido"]), texto=str(oferta.get("texto") or texto))]
    if not otras and (RE_NO.search(normal) or re.search(r"\besper\w*", normal)):
        return [Tarea(tipo="retirada", pedido=str(oferta["pedido"]), texto=texto)]
    return None
