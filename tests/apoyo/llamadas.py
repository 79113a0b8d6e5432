"""Llamadas a herramientas como las arma LangGraph: ``ToolRuntime``, ``ToolCallRequest`` y ``Runtime``.

Sirven para llamar a una herramienta o a la política sin montar el agente: con lo mismo que
recibirían dentro del grafo (contexto del cliente, ``thread_id``, ``tool_call_id``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import ExecutionInfo, Runtime

__all__ = ["invocar", "peticion", "runtime", "runtime_grafo"]


def runtime(contexto, *, tool_call_id: str | None, thread_id: str = "hilo-1", metadata=None):
    """El ``ToolRuntime`` que recibe una herramienta dentro del grafo."""
    return ToolRuntime(
        state={"messages": []},
        context=contexto,
        config={"configurable": {"thread_id": thread_id}, "metadata": metadata or {}},
        stream_writer=lambda _: None,
        tool_call_id=tool_call_id,
        store=None,
    )


def invocar(herramientas, nombre: str, args: dict, rt: ToolRuntime) -> ToolMessage:
    """``tool.invoke(ToolCall)`` de la herramienta ``nombre`` con el runtime ``rt``."""
    herramienta = next(h for h in herramientas if h.name == nombre)
    llamada = {"type": "tool_call", "id": rt.tool_call_id, "name": nombre,
               "args": {**args, "runtime": rt}}
    return herramienta.invoke(llamada)


def peticion(nombre: str, args: dict, contexto: Any, *, id: str = "call-1", hilo: str = "t1"):
    """Un ToolCallRequest como el que arma el middleware en modo batched (tool=None)."""
    llamada = {"name": nombre, "args": args, "id": id, "type": "tool_call"}
    estado = {"messages": []}
    return ToolCallRequest(
        tool_call=llamada,
        tool=None,
        state=estado,
        runtime=ToolRuntime(
            state=estado,
            context=contexto,
            config={"configurable": {"thread_id": hilo}},
            stream_writer=lambda _: None,
            tool_call_id=id,
            store=None,
        ),
    )


def runtime_grafo(contexto, hilo="t1"):
    """El Runtime del grafo que recibe la descripción (sin config; thread_id en execution_info)."""
    return Runtime(
        context=contexto,
        execution_info=ExecutionInfo(checkpoint_id="c", checkpoint_ns="", task_id="x", thread_id=hilo),
    )
