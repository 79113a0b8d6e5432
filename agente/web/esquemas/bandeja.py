"""Formas de la bandeja del encargado: la tarjeta de una aprobación (campos, historial del
cliente, líneas del libro, requisito y firmas), el historial de decisiones y la respuesta a
una decisión; y cómo se pasa del servicio a JSON.

Aparte de ``esquemas`` (cliente, entradas y errores) para que cada módulo se lea entero.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agente.servicio.aprobaciones.firmas import FirmaParcial, requisito_publico
from agente.servicio.decisiones.validacion import decisiones_permitidas
from agente.web.esquemas.comun import PLAZO_MAXIMO, Cliente
from nucleo import dinero
from nucleo.errores import ImporteNoValido

if TYPE_CHECKING:  # solo la anotación del registro que pasa la ruta (``Servicio.registro``)
    from herramientas import Registro


class CampoTarjeta(BaseModel):
    campo: str = Field(description="Nombre del argumento.")
    etiqueta: str = Field(description="Cómo lo nombra la tarjeta, en español.")
    dinero: bool = Field(description="Un importe: se enseña y se edita en euros.")


class Accion(BaseModel):
    nombre: str
    tool_call_id: str | None = Field(default=None, description=(
        "La llamada del agente: una decisión puede nombrarla para que se compruebe su orden."))
    titulo: str = Field(description="Título de la tarjeta (del registro de herramientas).")
    args: dict[str, Any]
    descripcion: str
    motivos: list[str]
    decisiones_permitidas: list[str]
    campos_editables: list[str] = Field(description="Argumentos que una edición puede cambiar.")
    campos: list[CampoTarjeta] = Field(description=(
        "Etiqueta de cada argumento, de la operación declarada; uno que no esté se enseña con su nombre."))
    legibles: dict[str, str] = Field(default_factory=dict, description=(
        "Cómo se lee un argumento que es un código: el nombre del producto de cada SKU («Cafetera de goteo»)."))


class MensajeRetenido(BaseModel):
    texto: str
    fecha: datetime


class MensajeTranscripcion(BaseModel):
    rol: Literal["cliente", "agente", "tienda"]
    texto: str
    fecha: datetime
    retenido: bool = Field(description="Lo escribió el cliente mientras esperaba la decisión.")
    autor: str | None = Field(default=None, description="Rol «tienda»: el nombre de quien lo escribió.")


class PedidoResumen(BaseModel):
    id: str
    fecha: datetime
    estado: str
    importe: str


class ReembolsoResumen(BaseModel):
    numero: str
    pedido: str
    importe: str
    estado: str
    concepto: str
    fecha: datetime


class CambioResumen(BaseModel):
    numero: str
    pedido: str
    estado: str
    fecha: datetime
    producto_original: str
    producto_nuevo: str


class DevolucionResumen(BaseModel):
    pedido: str
    importe: str
    motivo: str | None
    fecha: datetime


class TipoHistorial(BaseModel):
    clave: str = Field(description="La lista de esta operación en el historial (reembolsos, cambios...).")
    etiqueta: str = Field(description="«Reembolso», delante del número de cada fila.")
    plural: str = Field(description="«reembolsos», en el resumen.")
    detalle: str = Field(description="Plantilla de cada fila: {campo} o {campo:euros}.")


class HistorialCliente(BaseModel):
    # Una operación con efecto nueva trae su lista con su clave (la dice ``tipos``).
    model_config = ConfigDict(extra="allow")
    dias: int = Field(description="Ventana del historial (90 días).")
    pedidos: list[PedidoResumen]
    reembolsos: list[ReembolsoResumen]
    cambios: list[CambioResumen]
    devoluciones: list[DevolucionResumen]
    tipos: list[TipoHistorial] = Field(description="Cómo se enseña la lista de cada operación, en orden.")


class LineaLibro(BaseModel):
    linea: int
    sku: str
    producto: str
    unidades: int
    precio_unitario: str
    pagado: str
    reembolsado: str
    unidades_reembolsadas: int
    unidades_cambiadas: int
    unidades_libres: int
    reembolsable: str
    estado: str = Field(description="sin compensar | en parte | reembolsada | cambiada | cancelada (del libro).")


class PedidoDetalle(BaseModel):
    id: str
    estado: str
    fecha: datetime
    importe: str
    lineas: list[LineaLibro]


class Reclamo(BaseModel):
    thread_id: str | None = None
    encargado: str
    nombre: str | None = Field(default=None, description="Quién la atiende, por su nombre (lo que lee el personal).")
    hasta: datetime = Field(description="Pasado este momento deja de estar reclamada.")


class Requisito(BaseModel):
    firmas_necesarias: int = Field(ge=1, description="Firmas de personas distintas que hacen falta.")
    rol_minimo: Literal["encargado", "gerente", "regional"] = Field(
        description="Al menos una firma de este rol o superior (con límite que cubra el importe).")
    importe: str | None = Field(description="Lo que autoriza la firma, como texto (\"350.00\").")
    texto: str = Field(description="Para la tarjeta: «necesita gerente», «2 firmas, una de gerente o regional».")
    version_matriz: int | None = Field(description="Versión de la matriz de autoridad con la que se fijó.")


class Firma(BaseModel):
    encargado: str
    nombre: str
    rol: str
    decision: Literal["approve", "edit"]
    fecha: datetime


class Detalle(BaseModel):
    etiqueta: str = Field(description="El dato, en español («Producto nuevo», «Diferencia»).")
    valor: str | None = Field(description="Su valor; un importe en euros con punto («129.00»).")
    dinero: bool = Field(description="Un importe: se enseña en euros.")


class MiFirma(BaseModel):
    puede: bool = Field(description=(
        "Si tu firma contaría ahora aprobando tal cual (la misma comprobación que la decisión: "
        "si no, aprobar da 403 o 409). Rechazar cuenta siempre, salvo si ya firmaste."))
    motivo: str | None = Field(description="Por qué no contaría («tu límite es 300,00 EUR...»).")
    ya_firmada: bool = Field(description="Ya firmaste esta aprobación: falta la firma de otra persona.")
    falta: str | None = Field(description="Con alguna firma dada, lo que falta: «1 firma (gerente o regional)».")


class Aprobacion(BaseModel):
    thread_id: str
    tienda: str
    tienda_nombre: str = Field(description="El nombre de la tienda, para leerlo («Talavera de la Reina»).")
    estado: str = Field(description="pendiente | decidiendo")
    cliente: Cliente
    creada: datetime
    caduca: datetime = Field(description="Plazo: pasado este momento ya no se puede decidir (409).")
    plazo_fuera_de_rango: bool = Field(default=False, description=(
        "El plazo guardado supera el máximo de horas_caducidad (lo dejó una versión anterior): "
        "necesita que alguien lo revise; la auditoría lo enseña."))
    espera_segundos: int
    acciones: list[Accion]
    traza_url: str | None
    mensajes_retenidos: list[MensajeRetenido]
    ultimo_mensaje_tienda: int | None = Field(default=None, description=(
        "El id del último mensaje que alguien de la tienda escribió al cliente (None: ninguno). "
        "Si cambia, la conversación de la tarjeta creció: reléela con GET /api/aprobaciones/{id}."))
    reclamada: Reclamo | None = Field(default=None, description="«Lo atiendo yo» vigente, si lo hay.")
    conversacion: list[MensajeTranscripcion] | None = Field(
        default=None, description="Solo en GET /api/aprobaciones/{id}: la transcripción.")
    historial_cliente: HistorialCliente | None = Field(
        default=None, description="Solo en GET /api/aprobaciones/{id}: los últimos 90 días.")
    pedidos: dict[str, PedidoDetalle] | None = Field(
        default=None, description="Solo en GET /api/aprobaciones/{id}: líneas y libro de cada pedido.")
    detalles: list[list[Detalle]] | None = Field(default=None, description=(
        "Solo en GET /api/aprobaciones/{id}: por cada acción, lo que su operación añade a los "
        "argumentos (nombres y precios de un cambio, direcciones, límite de un vale...)."))
    requisito: Requisito = Field(description="La autoridad que exige, fijada al pausar (o al editar).")
    firmas: list[Firma] = Field(description="Las firmas ya recogidas, la primera antes.")
    mi_firma: MiFirma | None = Field(default=None, description="Si la firma de quien pregunta contaría, y si no, por qué.")


class TiendaResumen(BaseModel):
    id: str
    nombre: str = Field(description="El nombre de la tienda, para leerlo («Talavera de la Reina»).")


class Firmante(BaseModel):
    id: str
    nombre: str
    rol: Literal["encargado", "gerente", "regional"]
    tienda: TiendaResumen | None = Field(description=(
        "La suya (la de su token); null en un regional o un administrador sin tienda propia."))
    tiendas: list[TiendaResumen] = Field(description=(
        "Donde firma, por nombre: la suya y, si es regional, las de su región."))
    administrador: bool = Field(False, description="Gestiona todo el alta (tiendas, regiones y personas).")


class EncargadoResumen(BaseModel):
    id: str
    nombre: str


class AccionDecidida(BaseModel):
    nombre: str | None
    titulo: str | None = Field(None, description="El título de la operación («Reembolso»), lo que lee una persona.")
    pedido: str | None
    tipo: str | None
    importe_propuesto: str | None
    importe_final: str | None
    motivo: str | None


class DecisionDeFirma(BaseModel):
    tipo: str | None = Field(description="approve | edit | reject | respond")
    importe: str | None = Field(description="El importe editado, si editó.")
    motivo: str | None = Field(description="El motivo de un rechazo o el texto de una respuesta.")


class FirmaDecidida(BaseModel):
    encargado: str
    nombre: str
    rol: str
    fecha: datetime
    decision: str = Field(description="reject | edit | respond | approve (la que manda en su firma).")
    acciones: list[DecisionDeFirma] = Field(description="Lo que decidió en cada operación, en orden.")
    canal: Literal["web", "cli", "protocolo"] | None = Field(
        default=None, description="Por dónde llegó la firma: web, cli o protocolo (sin dato: de antes de registrarlo).")


class DecisionTomada(BaseModel):
    id: int
    thread_id: str
    tienda: str
    tienda_nombre: str = Field(description="El nombre de la tienda, para leerlo.")
    encargado: EncargadoResumen = Field(description="Quien la completó (la última firma).")
    cliente: Cliente
    decidida: datetime
    aplicada: datetime | None
    resultado: str | None
    espera_segundos: int
    tipo: str = Field(description="reject | edit | respond | approve | caducada (la que manda).")
    acciones: list[AccionDecidida]
    firmas: list[FirmaDecidida] = Field(
        description="Todas las firmas de la decisión, la primera antes (dos en una aprobación de dos firmas).")
    nota: str | None
    estado: Literal["aplicada", "fallida", "sin_aplicar"] = Field(description=(
        "fallida: se aplicó, pero un efecto aprobado no se pudo hacer (fallo dice por qué)."))
    fallo: str | None = Field(default=None, description="El error del efecto aprobado que falló.")


class PaginaDecisiones(BaseModel):
    total: int
    pagina: int
    por_pagina: int
    decisiones: list[DecisionTomada]


class RespuestaDecision(BaseModel):
    estado: Literal["aplicada", "fallida", "esperando_aprobacion", "esperando_firmas"] = Field(description=(
        "aplicada: la decisión se aplicó (mensaje_cliente); fallida: se aplicó, pero el efecto "
        "aprobado no se pudo hacer (fallo); esperando_aprobacion: el agente "
        "volvió a pausar; esperando_firmas: firma guardada, falta otra (firmas, firmas_necesarias)."
    ))
    mensaje_cliente: str | None = None
    fallo: str | None = None
    firmas: int | None = None
    firmas_necesarias: int | None = None


# -- del servicio a la API -----------------------------------------------------------------


def _args_json(valor: Any) -> Any:
    """Los argumentos de una acción, con el dinero como texto (``dinero.texto``)."""
    if isinstance(valor, Decimal | float):
        try:
            return dinero.texto(dinero.diferencia(valor))
        except ImporteNoValido:
            return str(valor)  # no es dinero (más de dos decimales): tal cual, sin redondear
    if isinstance(valor, dict):
        return {k: _args_json(v) for k, v in valor.items()}
    if isinstance(valor, list | tuple):
        return [_args_json(v) for v in valor]
    return valor


def aprobacion(fila: dict[str, Any], registro: Registro) -> dict[str, Any]:
    peticion = fila.get("peticion") or {}
    solicitudes = peticion.get("action_requests") or []
    configs = peticion.get("review_configs") or []
    motivos = fila.get("motivos") or []
    ids = peticion.get("tool_call_ids") or []
    acciones = []
    productos = fila.get("productos") or {}
    for n, solicitud in enumerate(solicitudes):
        herramienta = registro.get(solicitud.get("name"))
        args = solicitud.get("args") or {}
        acciones.append({
            "nombre": solicitud.get("name"),
            "tool_call_id": ids[n] if n < len(ids) else None,
            "titulo": (herramienta.titulo_encargado if herramienta else "") or solicitud.get("name") or "",
            "args": _args_json(solicitud.get("args") or {}),
            "descripcion": solicitud.get("description") or "",
            "motivos": list(motivos[n]) if n < len(motivos) else [],
            "decisiones_permitidas": decisiones_permitidas(configs[n] if n < len(configs) else {}, herramienta),
            "campos_editables": list(herramienta.campos_editables) if herramienta else [],
            "campos": [c.como_json() for c in herramienta.campos_tarjeta] if herramienta else [],
            "legibles": {campo: productos[str(v).strip().upper()] for campo, v in args.items()
                         if campo.startswith("sku") and isinstance(v, str) and str(v).strip().upper() in productos},
        })
    return {
        "thread_id": fila["thread_id"],
        "tienda": fila["tienda"],
        "tienda_nombre": fila.get("tienda_nombre") or fila["tienda"],
        "estado": fila.get("estado", "pendiente"),
        "cliente": {"id": fila["cliente_id"], "nombre": fila.get("cliente_nombre") or fila["cliente_id"]},
        "creada": fila["creada"],
        "caduca": fila["caduca"],
        "plazo_fuera_de_rango": fila["caduca"] - fila["creada"] > PLAZO_MAXIMO,
        "espera_segundos": int(fila.get("espera_segundos") or 0),
        "acciones": acciones,
        "traza_url": fila.get("traza_url"),
        "mensajes_retenidos": [
            {"texto": m["texto"], "fecha": m["creado"]} for m in fila.get("retenidos") or []
        ],
        "ultimo_mensaje_tienda": fila.get("ultimo_mensaje_tienda"),
        "reclamada": _reclamo(fila),
        **{k: fila[k] for k in ("conversacion", "historial_cliente", "pedidos", "detalles") if k in fila},
        "requisito": requisito_publico(fila.get("requisito")),
        "firmas": [
            {"encargado": f["encargado"], "nombre": f["nombre"], "rol": f["rol"], "fecha": f["fecha"],
             "decision": "edit" if any(d.get("type") == "edit" for d in f["decisiones"] or []) else "approve"}
            for f in fila.get("firmas") or []
        ],
        **({"mi_firma": fila["mi_firma"]} if "mi_firma" in fila else {}),
    }


def _reclamo(fila: dict[str, Any]) -> dict[str, Any] | None:
    hasta = fila.get("reclamada_hasta")
    if not hasta or not fila.get("asignada_a") or fila.get("estado", "pendiente") != "pendiente":
        return None
    if hasta <= datetime.now(UTC):
        return None
    return {"thread_id": fila["thread_id"], "encargado": fila["asignada_a"], "nombre": fila.get("asignada_nombre"),
            "hasta": hasta}


def respuesta_decision(respuesta) -> dict[str, Any]:
    if isinstance(respuesta, FirmaParcial):
        return {"estado": respuesta.estado, "firmas": respuesta.firmas,
                "firmas_necesarias": respuesta.firmas_necesarias}
    estado = "aplicada" if respuesta.estado == "respondida" else respuesta.estado
    if getattr(respuesta, "fallo", None):
        return {"estado": "fallida", "mensaje_cliente": respuesta.mensaje_cliente, "fallo": respuesta.fallo}
    return {"estado": estado, "mensaje_cliente": respuesta.mensaje_cliente}
