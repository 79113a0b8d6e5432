"""La fachada ``Servicio``: la única puerta al agente para la web y la CLI.

Compone los subpaquetes de ``agente.servicio`` (ver su ``__init__``) y cada método delega
en su módulo; aquí no hay SQL ni reglas.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psycopg_pool import ConnectionPool

from agente.notificaciones import avisos_cliente
from agente.servicio.alta.puerta import Alta
from agente.servicio.aprobaciones.firmas import FirmaParcial
from agente.servicio.auditoria import movimientos as todos_los_movimientos
from agente.servicio.auditoria.informe import informe as informe_auditoria
from agente.servicio.auditoria.verdad import puntuar_respuesta
from agente.servicio.conversaciones import portal_cliente, ritmo
from agente.servicio.conversaciones.atencion import Atencion
from agente.servicio.conversaciones.candados import CandadosHilo
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.conversaciones.escucha import Escucha
from agente.servicio.conversaciones.limite import LimiteEjecuciones
from agente.servicio.conversaciones.turnos import Conversaciones
from agente.servicio.decisiones import decididas, reclamos
from agente.servicio.decisiones.caducidad import Caducidad
from agente.servicio.decisiones.conciliacion import Conciliador
from agente.servicio.decisiones.decidir import SISTEMA, Decisiones
from agente.servicio.decisiones.ficha import ficha
from agente.servicio.entrada import EnlaceEntrada, canjear_enlace, encargado_por_email, pedir_enlace
from agente.servicio.operador import hilo, prefijos, salud
from agente.servicio.pagos.pendientes import InformePagos, Pagos
from agente.servicio.politica import cambios_politica, politica_tienda
from agente.servicio.protocolo import Ejecuciones, FiltroHilos, buscar_hilos, hilo_visible
from agente.servicio.resultados import (
    Arreglo,
    Ejecucion,
    Encargado,
    EstadoHilo,
    InformeAuditoria,
    RegistroDecision,
    Respuesta,
)
from agente.servicio.tienda.ingesta import IngestaTienda
from caja.pasarela import Pasarela
from herramientas import REGISTRO, Registro
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorConfiguracion

__all__ = ["SISTEMA", "Arreglo", "Ejecucion", "Encargado", "EstadoHilo", "FirmaParcial", "InformeAuditoria",
           "RegistroDecision", "Respuesta", "Servicio"]


class Servicio:
    """Conversaciones, cola de aprobaciones, decisiones, caducidad, conciliación y auditoría.

    Fachada fina: cada método delega en su módulo. ``registro`` es el de herramientas
    con el que se construyó ``agente`` (textos de espera y decisiones permitidas salen de
    ahí). ``espera_candado``: segundos que un turno o una decisión esperan a que otra
    ejecución suelte el hilo antes de ``HiloOcupado``. ``candados``: los candados de hilo
    del proceso (por defecto, una conexión propia a la base del pool); ``limite``: cuántas
    ejecuciones a la vez (por defecto 100, con 10 s de espera antes de ``Saturado``).
    """

    def __init__(
        self,
        *,
        pool: ConnectionPool,
        agente: Any,
        trazador: Any = None,
        espera_candado: float = 30.0,
        registro: Registro = REGISTRO,
        pasarela: Pasarela | None = None,
        candados: CandadosHilo | None = None,
        limite: LimiteEjecuciones | None = None,
    ) -> None:
        from agente.trazas import Trazador

        self.ejecutor = Ejecutor(
            pool=pool,
            agente=agente,
            trazador=trazador or Trazador(),
            registro=registro,
            espera_candado=espera_candado,
            candados=candados or CandadosHilo(conninfo=pool.conninfo),
            limite=limite or LimiteEjecuciones(maximo=100, espera=10.0),
        )
        self.conversaciones = Conversaciones(ejecutor=self.ejecutor)
        self.decisiones = Decisiones(ejecutor=self.ejecutor)
        self.caducidad = Caducidad(ejecutor=self.ejecutor, decisiones=self.decisiones)
        # Sin pasarela (algunas pruebas) no hay cola de movimientos que completar.
        self.pagos = Pagos(ejecutor=self.ejecutor, pasarela=pasarela) if pasarela is not None else None
        self.conciliador = Conciliador(
            ejecutor=self.ejecutor, conversaciones=self.conversaciones, decisiones=self.decisiones
        )
        self.ingesta = IngestaTienda(pool)
        self.alta = Alta(pool)  # tiendas, regiones y personas (docs/empezar-tienda.md)
        self.ejecuciones_protocolo = Ejecuciones(pool)
        self.atencion = Atencion(ejecutor=self.ejecutor)  # «Conversaciones» y «Escribir al cliente»

    # Lo compartido vive en el ejecutor; aquí solo se lee (la web, la CLI y el bench lo usan).
    pool = property(lambda self: self.ejecutor.pool, doc="El pool de conexiones (ConnectionPool).")
    agente = property(lambda self: self.ejecutor.agente, doc="El grafo de create_agent.")
    trazador = property(lambda self: self.ejecutor.trazador, doc="El Trazador de Langfuse.")
    registro = property(lambda self: self.ejecutor.registro, doc="El registro de herramientas.")
    espera_candado = property(lambda self: self.ejecutor.espera_candado, doc="Segundos de espera.")
    limite = property(lambda self: self.ejecutor.limite, doc="Ejecuciones a la vez (LimiteEjecuciones).")
    candados = property(lambda self: self.ejecutor.candados, doc="Los candados de hilo (CandadosHilo).")

    # -- conversaciones ---------------------------------------------------------------------

    def contexto_de_cliente(self, cliente_id: str, canal: str = "web") -> ContextoCliente:
        return self.conversaciones.contexto_de_cliente(cliente_id, canal)

    def iniciar_conversacion(self, ctx: ContextoCliente) -> str:
        return self.conversaciones.iniciar(ctx)

    def consulta(self, thread_id: str, ctx: ContextoCliente | None = None) -> dict[str, Any]:
        return self.conversaciones.consulta(thread_id, ctx)

    def historial(self, thread_id: str, ctx: ContextoCliente | None = None, *, desde: int = 0) -> dict[str, Any]:
        return self.conversaciones.historial(thread_id, ctx, desde=desde)

    def conversar(self, thread_id: str, texto: str, ctx: ContextoCliente, *, callbacks: Sequence[Any] = ()) -> Respuesta:
        return self.conversar_en_directo(thread_id, texto, ctx, None, callbacks=callbacks)

    def conversar_en_directo(self, thread_id: str, texto: str, ctx: ContextoCliente,
                             al_trozo: Callable[[str, str], None] | None, *, callbacks: Sequence[Any] = ()) -> Respuesta:
        """Un turno; con ``al_trozo``, con ``stream`` de LangGraph y el texto del modelo según llega
        (``conversaciones.en_directo``). ``callbacks``: de LangChain, para la ejecución (métricas)."""
        return puntuar_respuesta(self.ejecutor, self.conversaciones.conversar(
            thread_id, texto, ctx, al_trozo=al_trozo, callbacks=callbacks))

    # -- cola y decisiones --------------------------------------------------------------------

    def aprobaciones_pendientes(
        self, tienda: str | list[str] | tuple[str, ...] | None, limite: int = 50, *, firmante: Encargado | None = None
    ) -> list[dict[str, Any]]:
        """La cola de una tienda, de varias (un regional) o de todas (None); y ``mi_firma`` de ``firmante``."""
        return self.decisiones.bandeja(tienda, limite, firmante=firmante)

    def aprobacion(self, thread_id: str, *, tienda: str | None = None,
                   tiendas: tuple[str, ...] | None = None) -> dict[str, Any]:
        return self.decisiones.aprobacion(thread_id, tienda=tienda, tiendas=tiendas)

    def encargado_activo(self, encargado_id: str) -> Encargado:
        return self.decisiones.encargado_activo(encargado_id)

    def decidir(self, thread_id: str, encargado_id: str, decisiones: Any, *, nota: str | None = None,
                canal: str | None = None, callbacks: Sequence[Any] = ()) -> Respuesta | FirmaParcial:
        """Una firma: ``FirmaParcial`` si aún faltan firmas; si no, la respuesta al cliente.
        ``nota``: se añade al mensaje final del cliente; ``canal``: web, cli o protocolo."""
        respuesta = self.decisiones.decidir(thread_id, encargado_id, decisiones, nota=nota, canal=canal, callbacks=callbacks)
        return puntuar_respuesta(self.ejecutor, respuesta)  # una FirmaParcial sale tal cual

    # -- la bandeja de producto: ficha, «lo atiendo yo», historial ------------------------------

    def ficha_aprobacion(self, thread_id: str, *, firmante: Encargado) -> dict[str, Any]:
        """La aprobación con su transcripción, historial del cliente, libro y si su firma contaría."""
        fila = self.decisiones.aprobacion(thread_id, tiendas=firmante.tiendas, firmante=firmante)
        with self.pool.connection() as c:
            return ficha(c, fila)

    # -- entrada del personal (OIDC y enlace por correo) ---------------------------------------

    def encargado_por_email(self, email: str) -> Encargado:
        """El encargado activo con ese correo verificado; ``Prohibido`` si no lo hay."""
        with self.pool.connection() as c:
            return encargado_por_email(c, email)

    def pedir_enlace_entrada(self, email: str, ip: str) -> EnlaceEntrada | None:
        """El enlace que enviar, o ``None`` si no es de nadie activo (no se nota); ``DemasiadasPeticiones``."""
        with self.pool.connection() as c:
            return pedir_enlace(c, email, ip)

    def canjear_enlace_entrada(self, token: str, email: str) -> Encargado:
        with self.pool.connection() as c:
            return canjear_enlace(c, token, email)

    def reclamar(self, thread_id: str, encargado_id: str) -> dict[str, Any]:
        with self.pool.connection() as c:
            return reclamos.reclamar(c, thread_id, encargado_id)

    def soltar(self, thread_id: str, encargado_id: str) -> None:
        with self.pool.connection() as c:
            reclamos.soltar(c, thread_id, encargado_id)

    def comprobar_tienda(self, tienda: str) -> None:
        """``TiendaNoEncontrada`` («tienda desconocida: sevilla») si no existe."""
        with self.pool.connection() as c:
            politica_tienda.comprobar_tienda(c, tienda)

    def tiendas_de(self, encargado_id: str) -> list[str]:
        with self.pool.connection() as c:
            return reclamos.tiendas_de(c, encargado_id)

    def nombres_de_tiendas(self, tiendas: list[str] | tuple[str, ...]) -> dict[str, str]:
        with self.pool.connection() as c:
            return reclamos.nombres_de_tiendas(c, tiendas)

    def decisiones_tomadas(self, encargado_id: str, filtros: decididas.Filtros) -> tuple[list[dict[str, Any]], int]:
        """El historial de decisiones de las tiendas del encargado, con el total filtrado."""
        with self.pool.connection() as c:
            return decididas.buscar(c, reclamos.tiendas_de(c, encargado_id), filtros)

    def historial_decisiones(self, tiendas: list[str] | None, filtros: decididas.Filtros) -> tuple[list[dict[str, Any]], int]:
        """El historial para un operador (CLI): de esas tiendas, o de todas con None."""
        with self.pool.connection() as c:
            return decididas.buscar(c, tiendas, filtros)

    def movimientos(self, encargado_id: str | None, filtros: todos_los_movimientos.Filtros) -> tuple[Any, int, Any]:
        """(página de movimientos, total filtrado, totales por tipo) de las tiendas del encargado
        (None: todas, para un operador en la CLI)."""
        with self.pool.connection() as c:
            tiendas = reclamos.tiendas_de(c, encargado_id) if encargado_id is not None else None
            pagina, total = todos_los_movimientos.buscar(c, tiendas, filtros)
            return pagina, total, todos_los_movimientos.totales(c, tiendas, filtros)

    # -- la CLI: ids por prefijo y a quién sugerir en las pistas ---------------------------------

    def resolver_hilo(self, id_o_prefijo: str) -> str:
        with self.pool.connection() as c:
            return prefijos.resolver_hilo(c, id_o_prefijo)

    def encargado_sugerido(self, tienda: str) -> str | None:
        with self.pool.connection() as c:
            return prefijos.encargado_sugerido(c, tienda)

    # -- lo que el chat del cliente enseña al abrir ---------------------------------------------

    def pedidos_de_cliente(self, cliente_id: str, limite: int = 10) -> list[dict[str, Any]]:
        with self.pool.connection() as c:
            return portal_cliente.pedidos_de(c, cliente_id, limite=limite)

    def perfil_de_cliente(self, cliente_id: str) -> dict[str, Any] | None:
        """Lo que el chat enseña de quien escribe: nombre, tienda y espera típica."""
        with self.pool.connection() as c:
            return portal_cliente.perfil_de(c, cliente_id, sistema=SISTEMA)

    def conversaciones_de_cliente(self, cliente_id: str, limite: int = 20) -> list[dict[str, Any]]:
        with self.pool.connection() as c:
            return portal_cliente.conversaciones_de(c, cliente_id, limite=limite)

    def caducar(self) -> list[str]:
        return self.caducidad.caducar()

    def reconciliar(self) -> list[Arreglo]:
        return self.conciliador.reconciliar()

    def recibir_evento_pasarela(self, cuerpo: bytes, firma: str | None) -> dict[str, Any]:
        """Un webhook del proveedor de pagos (``EventoNoValido`` si la firma no vale)."""
        if self.pagos is None:
            raise ErrorConfiguracion("este servicio se creó sin pasarela de pagos")
        r = self.pagos.recibir_evento(cuerpo, firma)
        return {"evento": r.id, "tipo": r.tipo, "referencia": r.referencia, "resultado": r.resultado}

    def completar_movimientos(self, *, solo_vencidos: bool = True) -> InformePagos:
        """Reembolsos y cobros pendientes: los completa y avisa a cada cliente en su chat."""
        if self.pagos is None:
            raise ErrorConfiguracion("este servicio se creó sin pasarela de pagos")
        return self.pagos.completar(solo_vencidos=solo_vencidos)

    # -- política de la tienda (umbrales y matriz de autoridad, versionados) -------------------

    def politica(self, tienda: str, *, firmante: str | None = None) -> dict[str, Any]:
        """Umbrales y matriz vigentes de ``tienda`` con sus historias. Con ``firmante``,
        solo si es gerente de esa tienda o regional de su región (``Prohibido`` si no)."""
        with self.pool.connection() as c:
            if firmante is not None:
                politica_tienda.comprobar_administrador(c, firmante, tienda)
            return politica_tienda.ver(c, tienda)

    def fijar_politica(self, tienda: str, *, autor: str, canal: str | None = None, **cambios: Any) -> politica_tienda.ResultadoCambio:
        """Propone un cambio (``cambios_politica.proponer``): si solo endurece se aplica;
        si amplía, queda una solicitud que firma alguien por encima de ``autor``."""
        with self.pool.connection() as c:
            return cambios_politica.proponer(c, tienda=tienda, autor=autor, canal=canal, **cambios)

    def solicitudes_politica(
        self, *, firmante: str, tienda: str | None = None, estado: str | None = "pendiente"
    ) -> list[dict[str, Any]]:
        """Solicitudes de cambio de las tiendas que ``firmante`` administra (o de ``tienda``)."""
        with self.pool.connection() as c:
            return cambios_politica.solicitudes_de(c, firmante=firmante, tienda=tienda, estado=estado)

    def solicitud_politica(self, solicitud_id: int, *, firmante: str | None = None) -> dict[str, Any]:
        with self.pool.connection() as c:
            return cambios_politica.detalle_para(c, solicitud_id, firmante=firmante)

    def decidir_solicitud_politica(
        self, solicitud_id: int, *, firmante: str, aprobar: bool, motivo: str | None = None, canal: str | None = None
    ) -> dict[str, Any]:
        """Firma o rechaza un cambio que amplía (solo alguien por encima de su autor)."""
        with self.pool.connection() as c:
            return cambios_politica.decidir(
                c, solicitud_id=solicitud_id, firmante=firmante, aprobar=aprobar, motivo=motivo, canal=canal)

    def caducar_solicitudes_politica(self) -> list[int]:
        with self.pool.connection() as c:
            return cambios_politica.caducar(c)

    # -- ingesta del back office de la tienda (docs/conectar-tienda.md) ------------------------

    def autenticar_clave_tienda(self, valor: str | None, alcance: str | None) -> Any:
        return self.ingesta.autenticar(valor, alcance)

    def ingerir(self, tipo: str, clave: Any, id_: str, datos: Any) -> Any:
        """Un registro (``cliente``, ``producto``, ``stock``, ``pedido`` o ``estado``)."""
        return getattr(self.ingesta, tipo)(clave, id_, datos)

    def ingerir_lote(self, clave: Any, lineas: Any) -> Any:
        return self.ingesta.lote(clave, lineas)

    # -- el protocolo de LangGraph (/langgraph): hilos y ejecuciones ----------------------------

    def hilos_protocolo(self, filtro: FiltroHilos) -> list[dict[str, Any]]:
        """Hilos con su transcripción y su pausa; ``filtro`` dice también quién mira."""
        with self.pool.connection() as c:
            return buscar_hilos(c, filtro)

    def hilo_protocolo(self, thread_id: str, *, cliente_id: str | None = None,
                       tiendas: tuple[str, ...] | None = None) -> dict[str, Any]:
        """Un hilo si es del cliente (o de las tiendas de quien firma): 404, 403."""
        with self.pool.connection() as c:
            return hilo_visible(c, thread_id, cliente_id=cliente_id, tiendas=tiendas)

    def nueva_ejecucion_protocolo(self, **datos: Any) -> dict[str, Any]:
        return self.ejecuciones_protocolo.crear(**datos)

    def terminar_ejecucion_protocolo(self, run_id: Any, estado: str) -> dict[str, Any] | None:
        return self.ejecuciones_protocolo.terminar(run_id, estado)

    def ejecucion_protocolo(self, thread_id: str, run_id: str) -> dict[str, Any] | None:
        return self.ejecuciones_protocolo.leer(thread_id, run_id)

    def ejecuciones_de_hilo(self, thread_id: str, *, limite: int = 10, desplazamiento: int = 0) -> list[dict[str, Any]]:
        return self.ejecuciones_protocolo.listar(thread_id, limite=limite, desplazamiento=desplazamiento)

    # -- auditoría e inspección -----------------------------------------------------------------

    def auditoria(self, *, pendientes_mas_de_segundos: float = 3600) -> InformeAuditoria:
        """Firmas y libro: cada comprobación una consulta; vacío en todas = todo cuadra."""
        registros = self.pagos.registros_pasarela() if self.pagos is not None else None
        with self.pool.connection() as c:
            return informe_auditoria(c, pendientes_mas_de_segundos=pendientes_mas_de_segundos,
                                     registros_pasarela=registros)

    def estado_hilo(self, thread_id: str) -> EstadoHilo:
        return hilo.estado_hilo(self.ejecutor, self.conversaciones, thread_id)

    # -- operación: lo que la web pide sin tocar la base ----------------------------------------

    conexiones_maximas = property(lambda self: self.pool.max_size, doc="El máximo del pool.")

    def comprobar_ritmo(self, cliente_id: str, maximo: int) -> None:
        """Anota el mensaje; ``DemasiadasPeticiones`` si el cliente ya llegó a ``maximo`` en un minuto."""
        with self.pool.connection() as c:
            ritmo.comprobar_ritmo(c, cliente_id, maximo)

    def barrer_ritmos(self) -> int:
        with self.pool.connection() as c:
            return ritmo.barrer_ritmos(c)

    def base_responde(self, *, espera: float = 3.0) -> bool:
        return salud.base_responde(self.pool, espera=espera)

    def pendientes_por_tienda(self) -> list[tuple[str, int]]:
        return salud.pendientes_por_tienda(self.pool)

    def escucha(self, al_avisar: Callable[[str | None], None]) -> Escucha:
        """Un ``LISTEN`` de los avisos de mensajes nuevos (sin iniciar; ver ``conversaciones.escucha``)."""
        return Escucha(url=self.pool.conninfo, al_avisar=al_avisar)

    # -- avisos al cliente que cerró el chat (agente.notificaciones.avisos_cliente) --------------

    def latido_chat(self, conexion_id: str, ctx: ContextoCliente, thread_id: str) -> None:
        """El chat ``conexion_id`` de ``ctx`` sigue conectado a ``thread_id``: sin aviso por correo."""
        with self.pool.connection() as c:
            avisos_cliente.latido(c, conexion_id, ctx.cliente_id, thread_id)

    def fin_chat(self, conexion_id: str) -> None:
        with self.pool.connection() as c:
            avisos_cliente.quitar_presencia(c, conexion_id)

    def baja_avisos_cliente(self, cliente_id: str) -> bool:
        """El cliente deja de recibir avisos por correo; False si no existe."""
        with self.pool.connection() as c:
            return avisos_cliente.dar_de_baja(c, cliente_id)

    def limpiar_checkpoints(self, dias: int) -> Any:
        """La retención (``agente.retencion.limpiar``) sobre el pool del servicio."""
        from agente.retencion import limpiar
        return limpiar(self.pool, dias=dias)

    def cerrar(self) -> None:
        self.trazador.cerrar()
        self.ejecutor.candados.cerrar()
        self.pool.close()
