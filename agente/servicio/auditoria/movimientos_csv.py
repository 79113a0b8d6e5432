"""El CSV de los movimientos, con las reglas del de Historial (``nucleo.hoja_csv``).

«hoja» (por defecto): «;», BOM, coma decimal, la hora de la tienda con su zona y todo en
español. «maquina»: «,», importes con punto, fechas ISO 8601 y los valores de la API. Una
fila por movimiento; «Importe final» solo en los completados (lo que de verdad se movió).
"""

from __future__ import annotations

from typing import Any

from nucleo import hoja_csv

__all__ = ["COLUMNAS_CSV", "COLUMNAS_CSV_HOJA", "como_csv", "como_csv_hoja", "estado_pasarela"]

COLUMNAS_CSV = ("fecha", "tipo", "numero", "operacion", "tienda", "pedido", "cliente", "cliente_nombre",
                "flujo", "importe", "importe_final", "estado", "autorizado_por", "veredicto",
                "referencia_pasarela", "id_proveedor", "estado_pasarela", "completado_en", "detalle", "hilo")
COLUMNAS_CSV_HOJA = (
    "Fecha", "Zona horaria", "Tipo", "Número", "Operación", "Tienda", "Pedido", "Cliente",
    "Nombre del cliente", "Sentido", "Importe (EUR)", "Importe final (EUR)", "Estado", "Autorizado por",
    "Veredicto de la política", "Referencia en la pasarela", "Id del proveedor", "Estado en la pasarela",
    "Completado", "Detalle", "Hilo",
)
SENTIDOS = {"sale": "al cliente", "entra": "del cliente", "vale": "vale al cliente", "mercancia": "mercancía"}


def estado_pasarela(pasarela: dict[str, Any] | None) -> str:
    """Lo que dice la pasarela de un movimiento, para una persona («emitido», «falló 2 veces: …»)."""
    if pasarela is None:
        return ""
    if pasarela["fallo_tardio_en"] is not None:
        texto = "fallo tardío del proveedor"
    elif pasarela["requiere_persona"]:
        texto = "marcado para una persona"
    elif pasarela["estado"] == "pendiente" and pasarela["intentos"]:
        n = pasarela["intentos"]
        texto = f"falló {n} {'vez' if n == 1 else 'veces'}, se reintenta"
    else:
        return pasarela["estado"] or ""
    return texto + (f": {pasarela['error']}" if pasarela["error"] else "")


def _pasarela(m: dict[str, Any], clave: str) -> Any:
    return (m["pasarela"] or {}).get(clave)


def como_csv(movimientos: list[dict[str, Any]]) -> str:
    """Para programas: los valores de la API."""
    return hoja_csv.escribir(COLUMNAS_CSV, ((
        m["fecha"], m["tipo"], m["numero"], m["operacion"], m["tienda"], m["pedido"], m["cliente"]["id"],
        m["cliente"]["nombre"], m["flujo"], m["importe"], m["importe_final"], m["estado"], m["autorizado_por"],
        m["veredicto"], _pasarela(m, "referencia"), _pasarela(m, "id_proveedor"), _pasarela(m, "estado"),
        m["completado_en"], m["detalle"], m["thread_id"]) for m in movimientos), hoja=False)


def como_csv_hoja(movimientos: list[dict[str, Any]]) -> str:
    """Para una hoja de cálculo española, como el CSV de Historial. Empieza por el BOM."""
    def filas():
        for m in movimientos:
            fecha, zona = hoja_csv.hora_tienda(m["fecha"])
            completado = hoja_csv.hora_tienda(m["completado_en"])[0] if m["completado_en"] else ""
            yield (fecha, zona, m["titulo"], m["numero"], m["operacion"], m["tienda_nombre"] or m["tienda"],
                   m["pedido"], m["cliente"]["id"], m["cliente"]["nombre"], SENTIDOS[m["flujo"]],
                   hoja_csv.coma(m["importe"]), hoja_csv.coma(m["importe_final"]), m["estado"],
                   m["autorizado_por"], m["veredicto"], _pasarela(m, "referencia"), _pasarela(m, "id_proveedor"),
                   estado_pasarela(m["pasarela"]), completado, m["detalle"], m["thread_id"])
    return hoja_csv.escribir(COLUMNAS_CSV_HOJA, filas(), hoja=True)
