"""«Escribir al cliente» en Langfuse (``agente.trazas.mensaje_tienda``), contra ``ReceptorLangfuse``:
un evento ``mensaje_tienda`` en la traza de la aprobación pendiente (o en una propia), con
quién y en qué hilo, y los datos personales del texto enmascarados."""

from __future__ import annotations

import uuid

from agente.trazas import Trazador
from agente.trazas.mensaje_tienda import EVENTO_MENSAJE_TIENDA, registrar_mensaje_tienda
from tests.apoyo.receptor_langfuse import ReceptorLangfuse


def test_el_mensaje_de_la_tienda_queda_en_la_traza_de_la_historia():
    with ReceptorLangfuse() as receptor:
        trazador = Trazador(public_key=f"pk-test-{uuid.uuid4().hex}", secret_key="sk-test", host=receptor.url)
        try:
            traza = trazador.nuevo_trace_id()
            usada = registrar_mensaje_tienda(
                trazador, trace_id=traza, thread_id="h-1", mensaje_id=7, encargado_id="enc-talavera",
                tienda="talavera", texto="Te escribo a ana.garcia@example.com mañana")
            sin_pausa = registrar_mensaje_tienda(
                trazador, trace_id=None, thread_id="h-2", mensaje_id=8, encargado_id="enc-talavera",
                tienda="talavera", texto="Hola")
            trazador.flush()
        finally:
            trazador.cerrar()
        assert usada == traza
        assert sin_pausa == trazador.nuevo_trace_id(semilla="h-2:tienda:8")  # determinista
        spans = [s for s in receptor.spans_de(traza) if s.nombre == EVENTO_MENSAJE_TIENDA]
        assert len(spans) == 1
        texto = spans[0].texto()
        assert "enc-talavera" in texto and "h-1" in texto and "ana.garcia@example.com" not in texto
        assert [s.nombre for s in receptor.spans_de(sin_pausa)] == [EVENTO_MENSAJE_TIENDA]
        assert receptor.errores == []
